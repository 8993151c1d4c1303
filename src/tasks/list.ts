import type { Layout } from '../layout/layout.js';
import { judgedClaim } from './claimant.js';
import { readEnded } from './ended-log.js';
import { activeNames, allIds, boardNames, claimedIds, readTask } from './store.js';
import { activeName, checkBoardName, idOfActive, isFinished, unblocks, type Task, type TaskStatus } from './task.js';

/**
 * What `task list` shows (docs/design.md §15), read without the lock and without reading
 * every task: the unfinished tasks in claim order (at most `limit`), the last few to finish,
 * and the counts, from the indexes (store.ts). A board of 10,000 finished tasks costs one
 * log read and three substring scans of it (ended-log.ts), like `status` with many finished
 * agents (§14).
 */

export type Counts = Record<TaskStatus, number>;

export interface ListedTask extends Task {
  /** Blockers not yet done or cancelled (open tasks only). */
  waiting_on: string[];
}

export interface BoardListing {
  board: string;
  counts: Counts;
  tasks: ListedTask[];
  /** Unfinished tasks not shown (over the limit). */
  more: number;
  /** The last tasks to finish, newest last. */
  recent: ListedTask[];
}

export const DEFAULT_LIST_LIMIT = 100;
const RECENT = 10;

export function listBoard(layout: Layout, name: string, opts: { all?: boolean; limit?: number } = {}): BoardListing {
  const board = layout.board(checkBoardName(name));
  // A claim whose claimant is gone reads open now, before any writer reopens it (claimant.ts).
  const judged = new Map<string, string | null>();
  const seen = (t: Task): Task => judgedClaim(layout, t, judged);
  const listed = (t: Task): ListedTask => ({ ...t, waiting_on: t.status === 'open' ? waitingOn(layout, name, t) : [] });
  if (opts.all) {
    const tasks = allIds(board)
      .map((id) => readTask(board, id))
      .filter((t): t is Task => t !== undefined)
      .map(seen);
    tasks.sort((a, b) => (a.created_at < b.created_at ? -1 : a.created_at > b.created_at ? 1 : a.id < b.id ? -1 : 1));
    const all: Counts = { open: 0, claimed: 0, done: 0, failed: 0, cancelled: 0 };
    for (const t of tasks) all[t.status]++;
    return { board: name, counts: all, tasks: tasks.map(listed), more: 0, recent: [] };
  }
  const ended = readEnded(board, RECENT);
  const recent = ended.recent.map((id) => readTask(board, id)).filter((t): t is Task => t !== undefined);
  const names = activeNames(board);
  // Only the log's last line may name a task whose entries a killed writer left (ended-log.ts):
  // found by its index name, not by looking at every name.
  const lastTask = recent.at(-1)?.id === ended.last ? recent.at(-1) : undefined;
  const lastName = lastTask && activeName(lastTask);
  const stale = lastName !== undefined && names[sortedIndex(names, lastName)] === lastName ? 1 : 0;
  const claimedNames = claimedIds(board);
  let claimed = claimedNames.length - (ended.last !== undefined && claimedNames.includes(ended.last) ? 1 : 0);
  for (const id of claimedNames) {
    if (id === ended.last) continue;
    const t = readTask(board, id);
    if (t?.status === 'claimed' && seen(t) !== t) claimed--;
  }
  const counts: Counts = { open: names.length - stale - claimed, claimed, ...ended.counts };
  const limit = opts.limit ?? DEFAULT_LIST_LIMIT;
  const tasks: ListedTask[] = [];
  let skipped = stale;
  for (const n of names) {
    if (tasks.length >= limit) break;
    if (n === lastName) continue;
    const t = readTask(board, idOfActive(n));
    // An index entry a killed writer left: the task file is the truth.
    if (!t || isFinished(t.status)) {
      skipped++;
      continue;
    }
    tasks.push(listed(seen(t)));
  }
  return {
    board: name,
    counts,
    tasks,
    more: Math.max(0, names.length - skipped - tasks.length),
    recent: recent.map(listed),
  };
}

/** Where `name` is or would go in sorted `names`. */
function sortedIndex(names: readonly string[], name: string): number {
  let lo = 0;
  let hi = names.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (names[mid]! < name) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

function waitingOn(layout: Layout, name: string, task: Task): string[] {
  if (task.blocked_by.length === 0) return [];
  const board = layout.board(name);
  return task.blocked_by.filter((b) => {
    const dep = readTask(board, b);
    return !dep || !unblocks(dep.status);
  });
}

/** Counts only (status's line, `task wait`): two readdirs and the ended log. */
export function boardCounts(layout: Layout, name: string): Counts {
  return listBoard(layout, name, { limit: 0 }).counts;
}

/** Every board's counts here, by name (status's lines, §15); a folder that is not a board is left out, not judged. */
export function everyBoardCounts(layout: Layout): { board: string; counts: Counts }[] {
  const out = [];
  for (const board of boardNames(layout).sort()) {
    try {
      out.push({ board, counts: boardCounts(layout, board) });
    } catch {
      // A folder that is not a board (a bad name) is not status's to judge.
    }
  }
  return out;
}
