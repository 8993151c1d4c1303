import { modeRank } from './permission-mode.js';
import type { EffectivePolicy } from './tool-policy.js';

/**
 * No escalation (§7): a child's policy is a subset of its parent's. Pure; the spawner calls it
 * before anything opens and refuses with the returned message.
 */

export interface ParentPolicy extends Pick<EffectivePolicy, 'tools' | 'permissionMode' | 'secrets'> {
  /** The parent's agent id, named in the refusal. */
  id: string;
}

export interface ChildPolicy extends Pick<EffectivePolicy, 'tools' | 'permissionMode' | 'secrets'> {
  /** The child's definition name, named in the refusal. */
  name: string;
  timeoutSecs: number;
}

/**
 * What the parent has left that a child shares. Turns are not here: they are per agent
 * (§7, "No escalation"), so a child's `max_turns` is its own and never checked against the parent's.
 */
export interface Remaining {
  /** Seconds of wall clock the parent has left. */
  secs: number;
}

export type EscalationField = 'tools' | 'permission_mode' | 'secrets' | 'timeout_secs';

export type EscalationResult = { ok: true } | { ok: false; field: EscalationField; message: string };

export function checkEscalation(parent: ParentPolicy, child: ChildPolicy, remaining: Remaining): EscalationResult {
  const who = `'${child.name}'`;
  const par = `parent '${parent.id}'`;
  const refuse = (field: EscalationField, what: string): EscalationResult => ({
    ok: false,
    field,
    message: `spawn refused: ${who} ${what} (${field})`,
  });

  for (const tool of child.tools) {
    if (!parent.tools.includes(tool)) return refuse('tools', `asks for tool '${tool}', which ${par} does not have`);
  }
  if (modeRank(child.permissionMode) > modeRank(parent.permissionMode)) {
    return refuse(
      'permission_mode',
      `asks for permission mode '${child.permissionMode}', above the '${parent.permissionMode}' of ${par}`,
    );
  }
  for (const key of child.secrets) {
    if (!parent.secrets.includes(key))
      return refuse('secrets', `asks for secret '${key}', which ${par} may not request`);
  }
  if (child.timeoutSecs > remaining.secs) {
    return refuse(
      'timeout_secs',
      `asks for timeout_secs ${child.timeoutSecs}, above the ${Math.floor(remaining.secs)} s ${par} has left`,
    );
  }
  return { ok: true };
}

/** Which fields a definition set itself; the rest were filled from defaults. */
export interface Declared {
  tools: boolean;
  permissionMode: boolean;
  maxTurns: boolean;
  timeoutSecs: boolean;
}

/**
 * Narrows the fields a definition did not set itself to what the parent can give, so a
 * definition that merely took the defaults inherits rather than gets refused (a child of a
 * parent an hour into its time would otherwise always ask for more seconds than are left).
 * Fields the definition set explicitly are left alone for `checkEscalation` to judge.
 */
export function fitToParent(
  child: ChildPolicy,
  declared: Declared,
  parent: ParentPolicy,
  remaining: Remaining,
): ChildPolicy {
  return {
    ...child,
    tools: declared.tools ? child.tools : child.tools.filter((t) => parent.tools.includes(t)),
    permissionMode:
      declared.permissionMode || modeRank(child.permissionMode) <= modeRank(parent.permissionMode)
        ? child.permissionMode
        : parent.permissionMode,
    timeoutSecs: declared.timeoutSecs
      ? child.timeoutSecs
      : Math.max(0, Math.min(child.timeoutSecs, Math.floor(remaining.secs))),
  };
}
