import type { AgentRecord } from '../fleet/record.js';
import { isTerminal } from '../fleet/record-status.js';
import type { Layout } from '../layout/layout.js';
import { listLeases } from '../leases/list.js';
import { cachedBranchStates } from './branch-cache.js';
import { branchTips } from './branch-state.js';
import { type AgentWork, uncommittedOf, workPlaces } from './work.js';

/** One agent's work waiting for the person (`flotilla review`, docs/design.md §12). */
export interface ReviewRow {
  id: string;
  status: string;
  branch: string;
  /** The branch its worktree was made from (null: a detached HEAD). */
  base: string | null;
  ahead: number;
  behind: number;
  files: string[];
  uncommitted: number;
  /** Files a merge into the base branch would conflict on. */
  conflicts: string[];
  /** Paths it holds leases on now, in any checkout. */
  leases: string[];
}

/**
 * The finished and idle agents with work: a worktree agent whose branch has commits the base
 * branch lacks, or files not committed in its worktree; an in-place agent whose branch has
 * commits. What an in-place agent left uncommitted is the checkout's own changes (`flotilla diff <id>`).
 */
export async function reviewWork(layout: Layout, records: readonly AgentRecord[]): Promise<ReviewRow[]> {
  // A worktree agent's, or an in-place agent's branch (its record keeps the base it was made from).
  const done = records.filter((r) => (r.worktree || r.base) && (r.status === 'idle' || isTerminal(r.status)));
  if (done.length === 0) return [];
  const leases = listLeases(layout).flatMap((v) => v.leases);
  // Per agent only its worktree's `git status` (run by a few shells, skipped for a worktree
  // unchanged since the last review), alongside the branches, which are read all together.
  const places = workPlaces(layout, done);
  const [counts, states, works] = await Promise.all([
    uncommittedOf(layout, done, true),
    // The tips once in-place agents' commits are in (workPlaces imports them).
    places.then(async (works) => cachedBranchStates(layout, branchesOf(works), await branchTips(layout))),
    places,
  ]);
  // In the order of `branchesOf`, as the states are.
  const branches = works.flatMap((w, k) =>
    w.kind === 'branch'
      ? [{ rec: done[k]!, work: { ...w, uncommitted: (w.worktree && counts.get(w.worktree)) || 0 } }]
      : [],
  );
  return branches.flatMap(({ rec, work }, k): ReviewRow[] => {
    const s = states[k]!;
    if (!s.exists || (s.ahead === 0 && work.uncommitted === 0)) return [];
    return [
      {
        id: rec.id,
        status: rec.status,
        branch: work.branch,
        base: work.base.branch,
        ahead: s.ahead,
        behind: s.behind,
        files: s.files,
        uncommitted: work.uncommitted,
        conflicts: s.conflicts,
        leases: leases.filter((l) => l.holder === rec.id).map((l) => l.path),
      },
    ];
  });
}

type BranchWork = Extract<AgentWork, { kind: 'branch' }>;
const branchesOf = (works: readonly AgentWork[]): BranchWork[] =>
  works.filter((w): w is BranchWork => w.kind === 'branch');
