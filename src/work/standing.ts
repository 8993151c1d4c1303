import type { AgentRecord } from '../fleet/record.js';
import type { Layout } from '../layout/layout.js';
import { standings } from './ahead-behind.js';
import { branchTips } from './branch-state.js';
import { importInPlaceBranches } from './import-branch.js';
import { branchOf, inPlaceBranches } from './work.js';

/** An agent's branch against its base branch now (`status`, the dashboard). */
export interface Standing {
  branch: string;
  /** The branch its worktree was made from (null: a detached HEAD). */
  base: string | null;
  ahead: number;
  behind: number;
}

/**
 * The standing of each agent on a branch among `records` (in its worktree, or in place),
 * from one ref read and one history read for them all (`standings`), not a `rev-list` per
 * branch; in-place agents' commits are brought in first (import-branch.ts). An agent whose
 * branch is gone is left out.
 */
export async function branchStanding(layout: Layout, records: readonly AgentRecord[]): Promise<Map<string, Standing>> {
  const out = new Map<string, Standing>();
  const withBase = records.filter((r) => r.base);
  if (withBase.length === 0) return out;
  await importInPlaceBranches(layout, inPlaceBranches(withBase));
  const tips = await branchTips(layout);
  const mine = withBase.flatMap((r) => {
    const own = tips.get(`refs/heads/${branchOf(r.id)}`);
    const target = (r.base!.branch ? tips.get(`refs/heads/${r.base!.branch}`) : undefined) ?? r.base!.commit;
    return own ? [{ r, own, target }] : [];
  });
  const counts = await standings(layout.project, mine);
  mine.forEach(({ r }, k) =>
    out.set(r.id, { branch: branchOf(r.id), base: r.base!.branch, ahead: counts[k]!.ahead, behind: counts[k]!.behind }),
  );
  return out;
}

/** How a row shows it: `⎇ flotilla/x ↑2 ↓1`. */
export const standingMark = (s: Standing): string => `⎇ ${s.branch} ↑${s.ahead} ↓${s.behind}`;
