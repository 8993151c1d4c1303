import { FlotillaError, refusal, UsageError } from '../errors.js';
import { findCycle } from './graph.js';
import { checkTaskId, isFinished, reopened, unblocks, type Task, type TaskPriority } from './task.js';

/**
 * The board decisions both stores make (docs/design.md §15): this host's board files
 * (board.ts, under the board lock) and the fleet's BOARD bucket (team-store/board-kv.ts, by
 * compare-and-set). Pure: each takes the task as read and returns the task to write, or
 * throws the refusal; the stores read, write, audit and run hooks.
 */

export interface NewTask {
  title: string;
  body?: string;
  priority?: TaskPriority;
  labels?: string[];
  blockedBy?: string[];
  /** A chosen id (plans that name their tasks); default `t<n>`. */
  id?: string;
}

export type Ending = 'done' | 'failed' | 'cancelled';

/** A new task's title and blockers, checked before anything is read. */
export function checkNewTask(spec: NewTask): { title: string; blockedBy: string[] } {
  const title = spec.title.trim();
  if (!title) throw new UsageError("a task needs a title, e.g. flotilla task add 'write the parser'");
  if (spec.id !== undefined) checkTaskId(spec.id);
  const blockedBy = [...new Set(spec.blockedBy ?? [])];
  for (const b of blockedBy) checkTaskId(b);
  return { title, blockedBy };
}

/** Refuses a task `id` blocked by itself or by work that waits on it; `blockersOf` reads the board. */
export function checkNoCycle(id: string, blockedBy: readonly string[], blockersOf: (id: string) => string[]): void {
  if (blockedBy.includes(id))
    throw refusal('task-cycle', `refused: task '${id}' cannot be blocked by itself`, { task: id });
  const cycle = findCycle(id, [...blockedBy], blockersOf);
  if (cycle)
    throw refusal(
      'task-cycle',
      `refused: blocked_by would make a cycle ${cycle.join(' → ')} — a task cannot wait on work that waits on it`,
      { task: id },
    );
}

/** The task `add` writes: open, unclaimed, made now by `by`. */
export function newTask(
  board: string,
  id: string,
  checked: { title: string; blockedBy: string[] },
  spec: NewTask,
  by: string,
): Task {
  const now = new Date().toISOString();
  return {
    v: 1,
    id,
    board,
    title: checked.title,
    body: spec.body ?? '',
    status: 'open',
    priority: spec.priority ?? 'normal',
    labels: [...new Set(spec.labels ?? [])],
    blocked_by: checked.blockedBy,
    created_by: by,
    created_at: now,
    updated_at: now,
    claimed_by: null,
    claimed_at: null,
    finished_at: null,
    result: null,
    notes: [],
  };
}

export function taskExists(board: string, id: string): FlotillaError {
  return new FlotillaError(`task '${id}' already exists on board '${board}' — choose another id`, {
    code: 'task-exists',
  });
}

export function noSuchTask(board: string, id: string): FlotillaError {
  return new FlotillaError(
    `no task '${id}' on board '${board}' — run 'flotilla task list --board ${board}' to see its tasks`,
    { code: 'not-found' },
  );
}

/** Why a task cannot be claimed now, or null; `dep` reads a blocker (undefined: not on the board). */
export function claimBlocker(task: Task, dep: (id: string) => Task | undefined): string | null {
  if (task.status === 'claimed') return `it is claimed by ${task.claimed_by ?? '?'}`;
  if (task.status !== 'open') return `it is ${task.status}`;
  const waiting = task.blocked_by.filter((b) => {
    const d = dep(b);
    return !d || !unblocks(d.status);
  });
  return waiting.length > 0 ? `it is blocked by unfinished ${waiting.join(', ')}` : null;
}

/** `task` claimed by `by`, or the refusal saying who holds it or what it waits on. */
export function claimed(task: Task, by: string, dep: (id: string) => Task | undefined): Task {
  const why = claimBlocker(task, dep);
  if (why) {
    const holder = task.status === 'claimed' ? task.claimed_by : null;
    const text = holder
      ? `task ${task.id} is already claimed by ${holder} (since ${task.claimed_at ?? '?'})`
      : `task ${task.id} cannot be claimed: ${why}`;
    throw refusal(
      'task-not-claimable',
      `refused: ${text} — 'flotilla task claim --next' takes the first claimable task`,
      { task: task.id, ...(holder ? { holder } : {}) },
    );
  }
  const now = new Date().toISOString();
  return { ...task, status: 'claimed', claimed_by: by, claimed_at: now, updated_at: now };
}

/** `task` given back by `by` (its claimant or a person): open again, with a note. */
export function released(task: Task, by: string, why?: string): Task {
  if (task.status !== 'claimed')
    throw refusal('task-not-claimed', `refused: task ${task.id} is ${task.status}, not claimed — nothing to release`, {
      task: task.id,
    });
  mayAct(task, by, 'release');
  return reopened(task, by, `released by ${by}${why ? `: ${why}` : ''}`);
}

/**
 * Refuses an ending `by` may not make: a finished task, a cancel by other than its creator, done or failed by other
 * than its claimant.
 */
export function checkEnding(task: Task, by: string, status: Ending): void {
  if (isFinished(task.status))
    throw refusal('task-finished', `refused: task ${task.id} is already ${task.status}`, { task: task.id });
  if (status === 'cancelled') {
    if (by !== 'human' && by !== task.created_by)
      throw refusal(
        'task-not-yours',
        `refused: only the task's creator (${task.created_by}) or a person may cancel task ${task.id}`,
        { task: task.id },
      );
  } else {
    mayAct(task, by, status === 'done' ? 'mark done' : 'mark failed');
  }
}

/** `task` ended now with `status` and `result`. */
export function ended(task: Task, status: Ending, result: string): Task {
  const now = new Date().toISOString();
  return { ...task, status, finished_at: now, updated_at: now, result };
}

/** The audit event of an ending. */
export function endEvent(status: Ending): 'task_done' | 'task_failed' | 'task_cancelled' {
  return status === 'done' ? 'task_done' : status === 'failed' ? 'task_failed' : 'task_cancelled';
}

/** `task` as a refused completion leaves it: still claimed, the hook's feedback noted. */
export function refusedNoted(task: Task, feedback: string): Task {
  const now = new Date().toISOString();
  return {
    ...task,
    updated_at: now,
    notes: [...task.notes, { at: now, by: 'TaskCompleted hook', text: `completion refused: ${feedback}` }],
  };
}

export function completionRefused(id: string, feedback: string): FlotillaError {
  return refusal('task-completion-refused', `refused: the TaskCompleted hook kept task ${id} open: ${feedback}`, {
    task: id,
  });
}

/** Whether a refused completion is told to the task's claimant as mail: someone else (a person) marked it done. */
export function claimantToTell(task: Task, by: string): string | null {
  return task.claimed_by && task.claimed_by !== by && task.claimed_by !== 'human' ? task.claimed_by : null;
}

function mayAct(task: Task, by: string, what: string): void {
  if (by === 'human' || task.claimed_by === by) return;
  const holder = task.status === 'claimed' ? `its claimant (${task.claimed_by ?? '?'})` : 'whoever claims it';
  throw refusal('task-not-yours', `refused: only ${holder} or a person may ${what} task ${task.id} — claim it first`, {
    task: task.id,
    ...(task.claimed_by ? { holder: task.claimed_by } : {}),
  });
}

/** The mail a claimant gets when a person's `done` for its task was refused: the hook's feedback, from Flotilla. */
export function refusalMail(task: Task, by: string, feedback: string) {
  return {
    from: 'human',
    to: task.claimed_by!,
    kind: 'system',
    priority: 'high',
    summary: `task ${task.id}: completion refused by the TaskCompleted hook`,
    body: `${by} marked task ${task.id} ('${task.title}') on board '${task.board}' done, and the TaskCompleted hook refused it; the task is still yours:\n\n${feedback}`,
  } as const;
}
