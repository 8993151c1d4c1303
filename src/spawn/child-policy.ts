import type { Config } from '../config/schema.js';
import type { Definition } from '../definitions/types.js';
import { refusal } from '../errors.js';
import type { AgentRecord } from '../fleet/record.js';
// Not the policy index: it would load the shell analyser, which a spawn does not use.
import { checkEscalation, fitToParent } from '../policy/escalation.js';
import { effectivePolicy, type EffectivePolicy } from '../policy/tool-policy.js';

/**
 * What a new agent may do and for how long (§7, "No escalation"): its definition's policy,
 * fitted to what its parent has left; refused when the definition asks for more than that.
 * Turns are the child's own (its definition's or the default), never the parent's remainder;
 * only the wall clock is shared down the tree.
 */
export function childPolicy(
  definition: Definition,
  config: Config,
  parent: AgentRecord | null,
  /** Overrides the definition's wall-clock limit (a schedule's `timeout`). */
  requestedTimeoutSecs: number | undefined,
): { policy: EffectivePolicy; maxTurns: number; timeoutSecs: number } {
  let policy = effectivePolicy(definition, config.agents.default_disallowed_tools);
  const maxTurns = definition.maxTurns;
  let timeoutSecs = requestedTimeoutSecs ?? definition.timeoutSecs;
  if (parent) {
    const parentPolicy = {
      tools: parent.effectivePolicy.tools,
      permissionMode: parent.effectivePolicy.permissionMode,
      secrets: parent.effectivePolicy.secrets,
      name: parent.id,
      id: parent.id,
    };
    const elapsed = parent.startedAt ? (Date.now() - Date.parse(parent.startedAt)) / 1000 : 0;
    const remaining = { secs: Math.max(0, parent.timeoutSecs - elapsed) };
    const child = {
      tools: policy.tools,
      permissionMode: policy.permissionMode,
      secrets: policy.secrets,
      timeoutSecs,
      name: definition.name,
    };
    const fitted = fitToParent(child, definition.declared, parentPolicy, remaining);
    const verdict = checkEscalation(parentPolicy, fitted, remaining);
    if (!verdict.ok)
      throw refusal('escalation', verdict.message, { field: verdict.field, definition: definition.name });
    policy = { ...policy, tools: fitted.tools, permissionMode: fitted.permissionMode };
    timeoutSecs = Math.max(1, fitted.timeoutSecs);
  }
  return { policy, maxTurns, timeoutSecs };
}
