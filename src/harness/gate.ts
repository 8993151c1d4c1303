import { audit } from '../audit/audit.js';
import type { Log } from '../audit/logger.js';
import type { Definition } from '../definitions/types.js';
import type { AgentRecord } from '../fleet/record.js';
import type { HookContext } from '../hooks/run-hooks.js';
import type { Layout } from '../layout/layout.js';
import type { GateDecision } from '../loop/types.js';
import { checkToolCall, parsePermissionMode, permissionDecision, type EffectivePolicy } from '../policy/index.js';
import type { Tool, ToolCall } from '../tools/types.js';
import type { Approvals } from './approvals.js';

/**
 * The gate every tool call passes (§7, §9): the tool policy, then the permission mode
 * (asking a person when it says so), then PreToolUse hooks. Each denial is an error the
 * model reads, a WARN and an audit line naming the rule.
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
}): (call: ToolCall, tool: Tool | undefined, signal?: AbortSignal) => Promise<GateDecision> {
  const { layout, record, log } = opts;
  const mode = parsePermissionMode(record.permissionMode) ?? 'default';
  const deny = (call: ToolCall, rule: string, reason: string): GateDecision => {
    log.warn({ tool: call.name, rule }, 'tool call denied');
    audit(layout, { event: 'policy_denied', agent: record.id, tool: call.name, rule, reason });
    return { allow: false, reason };
  };

  return async (call, tool, signal) => {
    const policy = checkToolCall(opts.policy, call.name);
    if (policy.decision === 'deny' || !tool) {
      return deny(call, policy.rule, `'${call.name}' is not among this agent's tools (rule: ${policy.rule})`);
    }
    const perm = permissionDecision(mode, tool.klass, { canAsk: opts.canAsk });
    if (perm.decision === 'deny') {
      const why = perm.rule === 'plan'
        ? 'plan mode: tools are shown but nothing is executed — answer in text'
        : `permission mode '${mode}' needs a person's approval and nobody can answer here (rule: ${perm.rule})`;
      return deny(call, perm.rule, why);
    }
    if (perm.decision === 'ask') {
      const outcome = await opts.approvals.ask(call, mode, signal);
      if (!outcome.approved) return deny(call, `approval:${outcome.by}`, `a person denied it: ${outcome.reason}`);
    }
    const { runPreToolUse } = await import('../hooks/run-hooks.js');
    const hooked = await runPreToolUse(opts.definition.hooks, { name: call.name, input: call.input }, opts.hookContext);
    if (!hooked.allow) return deny(call, 'PreToolUse', hooked.reason);
    return { allow: true };
  };
}

