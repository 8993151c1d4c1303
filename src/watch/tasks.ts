import type { Layout } from '../layout/layout.js';
import { listBoard, type BoardListing } from '../tasks/list.js';
import { boardNames } from '../tasks/store.js';
import type { Task, TaskStatus } from '../tasks/task.js';

/**
 * The dashboard's tasks view data (docs/design.md §15, README "The dashboard"): every board's
 * unfinished tasks in claim order, then the last few to finish — read as `task list` reads
 * (indexes and the tasks shown, never every finished task).
 */

export interface TaskRow {
  board: string;
  id: string;
  status: TaskStatus;
  title: string;
  claimant: string | null;
  /** Blockers not yet done or cancelled. */
  blockers: string[];
  /** Since it was claimed (claimed), finished (finished), else created. */
  ageMs: number;
}

/** This host's boards, from their files (a `maildir` fleet); on a bus the listings come from team-poll.ts. */
export function gatherTasks(layout: Layout, now = Date.now()): TaskRow[] {
  const listings: BoardListing[] = [];
  for (const name of boardNames(layout).sort()) {
    try {
      listings.push(listBoard(layout, name));
    } catch {
      // A folder that is not a board (a bad name): not the dashboard's to judge.
    }
  }
  return taskRows(listings, now);
}

/** The rows of boards' listings, in the order given. */
export function taskRows(listings: readonly BoardListing[], now = Date.now()): TaskRow[] {
  return listings.flatMap((l) => [...l.tasks, ...l.recent].map((t) => toRow(t, t.waiting_on, now)));
}

function toRow(t: Task, blockers: string[], now: number): TaskRow {
  const since = t.status === 'claimed' ? t.claimed_at : (t.finished_at ?? t.created_at);
  return {
    board: t.board,
    id: t.id,
    status: t.status,
    title: t.title,
    claimant: t.claimed_by,
    blockers,
    ageMs: Math.max(0, now - Date.parse(since ?? t.created_at)),
  };
}
