/** What a tool may do, for permission modes (§7): `read` never asks; `write` and `exec` may. */
export type ToolClass = 'read' | 'write' | 'exec' | 'fleet';

/**
 * Permission modes (§7), ordered from least to most trusting. The order is what
 * no-escalation compares: a child may never run in a mode later in this list than its parent.
 */
export const PERMISSION_MODES = ['plan', 'default', 'accept_edits', 'dont_ask', 'bypass_permissions'] as const;

export type PermissionMode = (typeof PERMISSION_MODES)[number];

/** Claude Code's camelCase spellings, accepted in definitions for compatibility. */
const CLAUDE_MODES: Readonly<Record<string, PermissionMode>> = {
  plan: 'plan',
  default: 'default',
  acceptEdits: 'accept_edits',
  dontAsk: 'dont_ask',
  bypassPermissions: 'bypass_permissions',
};

/** `accept_edits`, `acceptEdits` → `accept_edits`; anything else → undefined. */
export function parsePermissionMode(raw: string): PermissionMode | undefined {
  const s = raw.trim();
  if ((PERMISSION_MODES as readonly string[]).includes(s)) return s as PermissionMode;
  return CLAUDE_MODES[s];
}

/** Position in the trust order (plan = 0 … bypass_permissions = 4). */
export function modeRank(mode: PermissionMode): number {
  return PERMISSION_MODES.indexOf(mode);
}

export type Decision = 'allow' | 'deny' | 'ask';

export interface PermissionDecision {
  decision: Decision;
  /** Stable name of what decided: the mode itself, or `no-approver` when an ask became a deny. */
  rule: string;
}

/**
 * What a mode says about one tool call (pure; the harness asks the person when told `ask`).
 * - `plan`: nothing runs — the agent answers in text only.
 * - `default`: reads and fleet tools run; writes and shell commands ask.
 * - `accept_edits`: file edits run too; shell commands still ask.
 * - `dont_ask`, `bypass_permissions`: everything runs.
 * With nobody able to answer (background, headless, approval timeout) an ask is a denial,
 * never a silent allow.
 */
export function permissionDecision(
  mode: PermissionMode,
  toolClass: ToolClass,
  opts: { canAsk: boolean },
): PermissionDecision {
  const decision = baseDecision(mode, toolClass);
  if (decision === 'ask' && !opts.canAsk) return { decision: 'deny', rule: 'no-approver' };
  return { decision, rule: mode };
}

function baseDecision(mode: PermissionMode, toolClass: ToolClass): Decision {
  switch (mode) {
    case 'plan':
      return 'deny';
    case 'default':
      return toolClass === 'write' || toolClass === 'exec' ? 'ask' : 'allow';
    case 'accept_edits':
      return toolClass === 'exec' ? 'ask' : 'allow';
    case 'dont_ask':
    case 'bypass_permissions':
      return 'allow';
  }
}
