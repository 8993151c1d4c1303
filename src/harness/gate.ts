import { audit } from '../audit/audit.js';
import type { Log } from '../audit/logger.js';
import type { Definition } from '../definitions/types.js';
import type { AgentRecord } from '../fleet/record.js';
import type { HookContext } from '../hooks/run-hooks.js';
import type { Layout } from '../layout/layout.js';
import type { GateDecision } from '../loop/types.js';
import {
  canonicalToolName,
  decideToolCall,
  type EffectivePolicy,
  type OpaqueSetting,
  type ReadScopeDecision,
  type ShellClassifier,
  type ShellVerdict,
} from '../policy/index.js';
import type { Tool, ToolCall } from '../tools/types.js';
import type { Approvals } from '../approvals/ask.js';

/**
 * The gate every tool call passes (§7, §9): one pure decision (src/policy/decide.ts: the
 * shell deny list, then the tool policy, then the permission mode), then a person's answer
 * when it says ask, then PreToolUse hooks. The audit's `tool_call` line is written once the
 * outcome is known and carries it: allow, deny, ask→approved|denied|timeout, or opaque.
 * Each denial is also an error the model reads, a WARN and a `policy_denied` line.
 */
export function createGate(opts: {
  layout: Layout;
  record: AgentRecord;
  policy: Pick<EffectivePolicy, 'tools' | 'withheld'>;
  definition: Definition;
  approvals: Approvals;
  canAsk: boolean;
  hookContext: HookContext;
  log: Log;
  /** The shell gate, loaded on the first shell command (src/harness/shell-parser.ts). */
  shellClassifier: () => Promise<ShellClassifier>;
  opaqueCommands?: OpaqueSetting | undefined;
  /** Where `read`, `glob` and `grep` may look (harness/read-scope.ts); undefined for other tools. */
  readScope?: (tool: string, input: unknown) => ReadScopeDecision | undefined;
}): (call: ToolCall, tool: Tool | undefined, signal?: AbortSignal) => Promise<GateDecision> {
  const { layout, record, log } = opts;
  const mode = record.permissionMode;
  const input = (call: ToolCall) => (call.input ?? {}) as Record<string, unknown>;
  const auditCall = (call: ToolCall, decision: string, rule: string, shell?: ShellVerdict) => {
    const i = input(call);
    audit(layout, {
      event: 'tool_call',
      agent: record.id,
      tool: call.name,
      decision,
      rule,
      ...(typeof i.command === 'string' ? { command: i.command } : {}),
      ...(typeof i.path === 'string' ? { path: i.path } : {}),
      ...(shell ? { shell: shell.verdict, ...(shell.reason ? { opaque_reason: shell.reason } : {}) } : {}),
    });
  };
  const deny = (call: ToolCall, decision: string, rule: string, reason: string, shell?: ShellVerdict): GateDecision => {
    log.warn({ tool: call.name, rule }, 'tool call denied');
    auditCall(call, decision, rule, shell);
    audit(layout, { event: 'policy_denied', agent: record.id, tool: call.name, rule, reason });
    return { allow: false, reason };
  };

  return async (call, tool, signal) => {
    const command = input(call).command;
    let shell: ShellVerdict | undefined;
    if (tool && canonicalToolName(call.name) === 'shell' && typeof command === 'string') {
      try {
        shell = (await opts.shellClassifier())(command);
      } catch (err) {
        // No gate, no command: fail closed.
        return deny(
          call,
          'deny',
          'shell-gate-unavailable',
          `the shell gate could not check the command (${err instanceof Error ? err.message : String(err)}); it was not run`,
        );
      }
    }
    const d = decideToolCall({
      tool: call.name,
      toolClass: tool?.klass,
      policy: opts.policy,
      mode,
      canAsk: opts.canAsk,
      ...(shell ? { shell } : {}),
      ...(opts.opaqueCommands ? { opaqueCommands: opts.opaqueCommands } : {}),
    });
    if (d.decision === 'deny') return deny(call, 'deny', d.rule, d.reason ?? d.rule, shell);
    // A read outside the agent's folders asks (or is refused) whatever the mode lets reads do.
    const scope = tool ? opts.readScope?.(call.name, call.input) : undefined;
    if (scope && scope.decision === 'deny') return deny(call, 'deny', scope.rule, scope.reason);
    if (scope?.decision === 'ask' && !opts.canAsk)
      return deny(call, 'deny', 'no-approver', `${scope.reason}, and nobody can answer here; it was not read`);
    let decision = d.opaque ? 'opaque' : 'allow';
    if (d.decision === 'ask' || scope?.decision === 'ask') {
      // An "always" answer covers a tool, not a folder: each read outside asks again.
      const outcome = await opts.approvals.ask(call, mode, signal, {
        ignoreAlways: d.opaque || scope?.decision === 'ask',
      });
      decision = outcome.approved ? 'ask→approved' : outcome.by === 'timeout' ? 'ask→timeout' : 'ask→denied';
      if (!outcome.approved)
        return deny(call, decision, `approval:${outcome.by}`, `a person denied it: ${outcome.reason}`, shell);
    }
    const { runPreToolUse } = await import('../hooks/run-hooks.js');
    const hooked = await runPreToolUse(opts.definition.hooks, { name: call.name, input: call.input }, opts.hookContext);
    if (!hooked.allow) return deny(call, 'deny', 'PreToolUse', hooked.reason, shell);
    auditCall(call, decision, d.rule, shell);
    return { allow: true };
  };
}
