import { permissionDecision, type PermissionMode, type ToolClass } from './permission-mode.js';
import type { ShellVerdict } from './shell/classify.js';
import { checkToolCall, type EffectivePolicy } from './tool-policy.js';

/**
 * The one place a tool call is decided (§7; docs/security.md, "One decision per call, in order"), in this order:
 * 1. the shell deny list — a denied command is refused before anyone is asked;
 * 2. the tool policy — a tool the agent was not given is refused;
 * 3. the permission mode, where an opaque shell command (one the gate cannot decide)
 *    means what `security.opaque_commands` or the mode says:
 *
 * | mode                          | plain command | opaque command (no override) |
 * |-------------------------------|---------------|------------------------------|
 * | plan                          | deny          | deny                         |
 * | default, accept_edits         | ask           | ask, even after "always"     |
 * | dont_ask, bypass_permissions  | allow         | allow, audited as `opaque`   |
 *
 * Wherever it would ask and nobody can answer, it is denied (`no-approver`).
 */

/** `security.opaque_commands`: what an opaque command means, whatever the mode. */
export type OpaqueSetting = 'ask' | 'deny' | 'allow';

export interface CallFacts {
  tool: string;
  /** The tool's class; undefined when the agent has no such tool. */
  toolClass: ToolClass | undefined;
  policy: Pick<EffectivePolicy, 'tools' | 'withheld'>;
  mode: PermissionMode;
  /** A person can answer an approval here (not background, not headless). */
  canAsk: boolean;
  /** The shell gate's verdict, for a shell call. */
  shell?: ShellVerdict;
  opaqueCommands?: OpaqueSetting;
}

export interface CallDecision {
  decision: 'allow' | 'deny' | 'ask';
  /** What decided: `deny_commands:<pattern>`, a tool-policy list, a mode, `opaque_commands`, `no-approver`. */
  rule: string;
  /** For a denial: what the model reads. */
  reason?: string;
  /** The call is an opaque shell command: an "always" approval does not cover it, and the audit says so. */
  opaque: boolean;
}

export function decideToolCall(f: CallFacts): CallDecision {
  const opaque = f.shell?.verdict === 'opaque';
  if (f.shell?.verdict === 'deny') {
    const matched = f.shell.command ? `, matched \`${f.shell.command}\`` : '';
    return {
      decision: 'deny',
      rule: `deny_commands:${f.shell.rule ?? '?'}`,
      reason: `the shell gate refuses it (deny-list rule \`${f.shell.rule}\`${matched}${f.shell.why ? `: ${f.shell.why}` : ''}); it was not run and no person was asked. Reach the goal another way, or ask a person to run it`,
      opaque: false,
    };
  }
  const policy = checkToolCall(f.policy, f.tool);
  if (policy.decision === 'deny' || !f.toolClass) {
    return {
      decision: 'deny',
      rule: policy.rule,
      reason: `'${f.tool}' is not among this agent's tools (rule: ${policy.rule})`,
      opaque,
    };
  }
  const perm = permissionDecision(f.mode, f.toolClass, { canAsk: f.canAsk });
  if (perm.decision === 'deny' && perm.rule === 'plan') {
    return {
      decision: 'deny',
      rule: 'plan',
      reason: 'plan mode: tools are shown but nothing is executed — answer in text',
      opaque,
    };
  }
  if (opaque && f.opaqueCommands !== 'allow') {
    const why = `the shell gate cannot tell statically what it runs (${f.shell?.reason ?? 'opaque'})`;
    if (f.opaqueCommands === 'deny')
      return {
        decision: 'deny',
        rule: 'opaque_commands',
        reason: `${why}, and security.opaque_commands is 'deny'. Write the command out literally`,
        opaque,
      };
    const asks = f.opaqueCommands === 'ask' || f.mode === 'default' || f.mode === 'accept_edits';
    if (asks) {
      if (!f.canAsk)
        return {
          decision: 'deny',
          rule: 'no-approver',
          reason: `${why}, so it needs a person's approval and nobody can answer here. Write the command out literally (no text run as code), or run it where a person can approve`,
          opaque,
        };
      return { decision: 'ask', rule: f.opaqueCommands === 'ask' ? 'opaque_commands' : f.mode, opaque };
    }
    return { decision: 'allow', rule: f.mode, opaque };
  }
  if (perm.decision === 'deny') {
    return {
      decision: 'deny',
      rule: perm.rule,
      reason: `permission mode '${f.mode}' needs a person's approval and nobody can answer here (rule: ${perm.rule})`,
      opaque,
    };
  }
  return { decision: perm.decision, rule: perm.rule, opaque };
}
