import { UsageError } from '../errors.js';

/**
 * A task on a board (docs/design.md §15): `open → claimed → done | failed`, and `cancelled`
 * from any unfinished state. A claim that ends without an answer (released, or its claimant
 * ended) puts the task back to `open` with a note saying who had it.
 */
export type TaskStatus = 'open' | 'claimed' | 'done' | 'failed' | 'cancelled';

export const TASK_STATUSES: readonly TaskStatus[] = ['open', 'claimed', 'done', 'failed', 'cancelled'];

export type TaskPriority = 'urgent' | 'high' | 'normal' | 'low';

/** Highest first: `claim --next` takes the first claimable task by priority, then age. */
export const TASK_PRIORITIES: readonly TaskPriority[] = ['urgent', 'high', 'normal', 'low'];

export interface TaskNote {
  at: string;
  by: string;
  text: string;
}

export interface Task {
  v: 1;
  id: string;
  board: string;
  title: string;
  body: string;
  status: TaskStatus;
  priority: TaskPriority;
  labels: string[];
  /** Tasks that must be `done` (or `cancelled`) before this one can be claimed. */
  blocked_by: string[];
  created_by: string;
  created_at: string;
  updated_at: string;
  claimed_by: string | null;
  claimed_at: string | null;
  finished_at: string | null;
  /** The claimant's answer (done) or reason (failed, cancelled). */
  result: string | null;
  /** What happened to the task beyond its status: reopenings, refused completions. */
  notes: TaskNote[];
}

/** Finished: nothing changes a task in these states again. */
/** The task given back: open, unclaimed, with a note saying why. */
export function reopened(task: Task, by: string, text: string): Task {
  const now = new Date().toISOString();
  return {
    ...task,
    status: 'open',
    claimed_by: null,
    claimed_at: null,
    updated_at: now,
    notes: [...task.notes, { at: now, by, text }],
  };
}

export function isFinished(status: TaskStatus): boolean {
  return status === 'done' || status === 'failed' || status === 'cancelled';
}

/** A blocker in one of these states no longer holds its dependents back. */
export function unblocks(status: TaskStatus): boolean {
  return status === 'done' || status === 'cancelled';
}

/** Task ids and board names: a file name on every platform, no dots first, no '/'. */
export const TASK_ID_PATTERN = /^[a-zA-Z0-9][a-zA-Z0-9_-]{0,63}$/;
export const BOARD_PATTERN = /^[a-z0-9][a-z0-9_-]{0,63}$/;

/** The board a fleet's agents share when no `--board` is named. */
export const DEFAULT_BOARD = 'fleet';

export function checkBoardName(name: string): string {
  if (!BOARD_PATTERN.test(name)) {
    throw new UsageError(
      `invalid board name '${name}': use lower-case letters, digits, '-' and '_' (up to 64), e.g. --board backend`,
    );
  }
  return name;
}

export function checkTaskId(id: string): string {
  if (!TASK_ID_PATTERN.test(id)) {
    throw new UsageError(`invalid task id '${id}': use letters, digits, '-' and '_' (up to 64), e.g. t12`);
  }
  return id;
}

export function checkPriority(p: string): TaskPriority {
  if (!(TASK_PRIORITIES as readonly string[]).includes(p)) {
    throw new UsageError(`invalid priority '${p}': use one of ${TASK_PRIORITIES.join(', ')}`);
  }
  return p as TaskPriority;
}

/**
 * The active index's file name for a task: a plain sort of these names is the claim order
 * (priority, then creation time, then id), so `claim --next` and `list` read only the
 * tasks they show.
 */
export function activeName(task: Pick<Task, 'priority' | 'created_at' | 'id'>): string {
  const rank = TASK_PRIORITIES.indexOf(task.priority);
  const ms = String(Date.parse(task.created_at)).padStart(15, '0');
  return `${rank}-${ms}-${task.id}`;
}

/** The task id in an active index name. */
export function idOfActive(name: string): string {
  return name.slice(name.indexOf('-', 2) + 1);
}

/** A task read from disk, checked just enough that the code reading it can trust its shape. */
export function parseTask(text: string): Task | null {
  let t: Partial<Task>;
  try {
    t = JSON.parse(text) as Partial<Task>;
  } catch {
    return null;
  }
  if (typeof t !== 'object' || t === null || t.v !== 1 || typeof t.id !== 'string' || typeof t.title !== 'string')
    return null;
  if (!(TASK_STATUSES as readonly (string | undefined)[]).includes(t.status)) return null;
  if (!Array.isArray(t.blocked_by) || !Array.isArray(t.labels) || !Array.isArray(t.notes)) return null;
  return t as Task;
}
