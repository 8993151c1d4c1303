import type { PermissionMode } from './permission-mode.js';

/**
 * Where reads may go (docs/security.md, "What reads may touch"): `read`, `glob` and `grep` run
 * in the harness, outside any sandbox, so the folders they may read are decided here. Inside
 * the project, its worktrees, the agent's own folders and `permissions.read_dirs` a read just
 * runs; anywhere else it asks a person (`default`, `plan`, `accept_edits`) or is refused
 * (`dont_ask`); credentials are refused in every mode but `bypass_permissions`, which
 * reads anywhere. Paths arrive absolute and with symlinks resolved: the caller does the I/O.
 */
export interface ReadScope {
  /** Folders reads may use without asking. */
  inside: readonly string[];
  /**
   * Files and folders no read may touch: the person's credentials (tools/sandbox-credentials.ts) and the fleet's
   * secrets.
   */
  credentials: readonly string[];
}

export type ReadScopeDecision =
  | { decision: 'allow' }
  | { decision: 'ask' | 'deny'; rule: 'read-scope:outside' | 'read-scope:credentials'; reason: string };

/** True when `path` is `dir` or inside it (both absolute, normalised). */
export function isWithin(path: string, dir: string): boolean {
  const d = dir.endsWith('/') ? dir.slice(0, -1) : dir;
  return path === d || path.startsWith(d + '/') || d === '';
}

/** What a read of `paths` (every file or folder the call would look at) may do in `mode`. */
export function decideRead(paths: readonly string[], scope: ReadScope, mode: PermissionMode): ReadScopeDecision {
  if (mode === 'bypass_permissions') return { decision: 'allow' };
  const secret = paths.find((p) => scope.credentials.some((c) => isWithin(p, c)));
  if (secret !== undefined) {
    return {
      decision: 'deny',
      rule: 'read-scope:credentials',
      reason: `'${secret}' is among the person's credentials, which no agent reads (only bypass_permissions does); it was not read — ask a person for what you need from it`,
    };
  }
  const outside = paths.find((p) => !scope.inside.some((d) => isWithin(p, d)));
  if (outside === undefined) return { decision: 'allow' };
  const where = `'${outside}' is outside the project, its worktrees and permissions.read_dirs`;
  if (mode === 'dont_ask') {
    return {
      decision: 'deny',
      rule: 'read-scope:outside',
      reason: `${where}, and in dont_ask mode nobody is asked; it was not read — a person can add the folder to permissions.read_dirs`,
    };
  }
  return { decision: 'ask', rule: 'read-scope:outside', reason: `${where}: a person must approve the read` };
}
