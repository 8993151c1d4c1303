import type { AgentRecord } from '../fleet/record.js';
import type { Layout } from '../layout/layout.js';
import { git } from './git.js';
import { branchOf } from './work.js';

/** A worktree agent's branch against its base branch now (`status`, the dashboard). */
export interface Standing {
  branch: string;
  /** The branch its worktree was made from (null: a detached HEAD). */
  base: string | null;
  ahead: number;
  behind: number;
}

/**
 * The standing of each worktree agent among `records`: one `rev-list --count` per branch,
 * all at once. An agent whose branch is gone is left out.
 */
export async function worktreeStanding(layout: Layout, records: readonly AgentRecord[]): Promise<Map<string, Standing>> {
  const out = new Map<string, Standing>();
  await Promise.all(records.filter((r) => r.worktree && r.base).map(async (r) => {
    const branch = branchOf(r.id);
    const from = r.base!.branch ? `refs/heads/${r.base!.branch}` : r.base!.commit;
    const c = await git(layout.project, ['rev-list', '--left-right', '--count', `${from}...refs/heads/${branch}`]);
    if (c.code !== 0) return;
    const [behind, ahead] = c.stdout.trim().split(/\s+/).map(Number);
    out.set(r.id, { branch, base: r.base!.branch, ahead: ahead ?? 0, behind: behind ?? 0 });
  }));
  return out;
}

/** How a row shows it: `⎇ flotilla/x ↑2 ↓1`. */
export const standingMark = (s: Standing): string => `⎇ ${s.branch} ↑${s.ahead} ↓${s.behind}`;
