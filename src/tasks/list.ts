import type { Layout } from '../layout/layout.js';
import { activeIds, allIds, claimedIds, endedTasks, readTask } from './store.js';
import { checkBoardName, isFinished, unblocks, type Task, type TaskStatus } from './task.js';

/**
 * What `task list` shows (docs/design.md §15), read without the lock and without reading
 * every task: the unfinished tasks in claim order (at most `limit`), the last few to finish,
 * and the counts, from the indexes (store.ts). A board of 10,000 finished tasks costs one
 * log read, like `status` with many finished agents (§14).
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
  const ended = endedTasks(board);
  const counts: Counts = { open: 0, claimed: 0, done: 0, failed: 0, cancelled: 0 };
  for (const s of ended.values()) counts[s]++;
  const listed = (t: Task): ListedTask => ({ ...t, waiting_on: t.status === 'open' ? waitingOn(layout, name, t) : [] });
  if (opts.all) {
    const tasks = allIds(board).map((id) => readTask(board, id)).filter((t): t is Task => t !== undefined);
    tasks.sort((a, b) => (a.created_at < b.created_at ? -1 : a.created_at > b.created_at ? 1 : a.id < b.id ? -1 : 1));
    const all: Counts = { open: 0, claimed: 0, done: 0, failed: 0, cancelled: 0 };
    for (const t of tasks) all[t.status]++;
    return { board: name, counts: all, tasks: tasks.map(listed), more: 0, recent: [] };
  }
  const active = activeIds(board).filter((id) => !ended.has(id));
  const claimed = new Set(claimedIds(board));
  counts.claimed = active.filter((id) => claimed.has(id)).length;
  counts.open = active.length - counts.claimed;
  const limit = opts.limit ?? DEFAULT_LIST_LIMIT;
  const tasks: ListedTask[] = [];
  let skipped = 0;
  for (const id of active) {
    if (tasks.length >= limit) break;
    const t = readTask(board, id);
    // An index entry a killed writer left: the task file is the truth.
    if (!t || isFinished(t.status)) {
      skipped++;
      continue;
    }
    tasks.push(listed(t));
  }
  const recent = [...ended.keys()].slice(-RECENT).map((id) => readTask(board, id)).filter((t): t is Task => t !== undefined).map(listed);
  return { board: name, counts, tasks, more: Math.max(0, active.length - skipped - tasks.length), recent };
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
