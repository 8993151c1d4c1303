import type { AgentRecord } from '../fleet/record.js';
import { isTerminal } from '../fleet/record-status.js';
import type { Layout } from '../layout/layout.js';
import { listLeases } from '../leases/list.js';
import { branchState, branchTips } from './branch-state.js';
import { agentWork } from './work.js';

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
 * branch lacks, or files not committed in its worktree. In-place agents have no branch; their
 * work is the checkout's own changes (`flotilla diff <id>`).
 */
export async function reviewWork(layout: Layout, records: readonly AgentRecord[]): Promise<ReviewRow[]> {
  const done = records.filter((r) => r.worktree && (r.status === 'idle' || isTerminal(r.status)));
  const leases = listLeases(layout).flatMap((v) => v.leases);
  const tips = await branchTips(layout);
  // A few git processes at a time: fifty agents' worth at once only thrash a small machine.
  const rows = await inBatches(done, REVIEW_CONCURRENCY, async (rec): Promise<ReviewRow | null> => {
    const work = await agentWork(layout, rec);
    if (work.kind !== 'branch') return null;
    const s = await branchState(layout, work.branch, work.base, tips);
    if (!s.exists || (s.ahead === 0 && work.uncommitted === 0)) return null;
    return {
      id: rec.id, status: rec.status, branch: work.branch, base: work.base.branch, ahead: s.ahead, behind: s.behind, files: s.files,
      uncommitted: work.uncommitted, conflicts: s.conflicts, leases: leases.filter((l) => l.holder === rec.id).map((l) => l.path),
    };
  });
  return rows.filter((r): r is ReviewRow => r !== null);
}

const REVIEW_CONCURRENCY = 4;

/** `fn` over `items`, at most `n` running at once, results in order. */
async function inBatches<T, R>(items: readonly T[], n: number, fn: (item: T) => Promise<R>): Promise<R[]> {
  const out: R[] = new Array<R>(items.length);
  let next = 0;
  const worker = async (): Promise<void> => {
    for (let i = next++; i < items.length; i = next++) out[i] = await fn(items[i]!);
  };
  await Promise.all(Array.from({ length: Math.min(n, items.length) }, worker));
  return out;
}
