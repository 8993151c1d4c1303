import { audit } from '../audit/audit.js';
import { FlotillaError, refusal, UsageError } from '../errors.js';
import type { BoardPaths, Layout } from '../layout/layout.js';
import { findCycle } from './graph.js';
import { claimantGone } from './claimant.js';
import { completionGate, taskCreatedHooks } from './hooks.js';
import { withBoardLock } from './lock.js';
import { activeIds, boardNames, claimedIds, nextTaskId, readTask, repairEntry, writeTask } from './store.js';
import { checkBoardName, checkTaskId, isFinished, reopened, unblocks, type Task, type TaskPriority } from './task.js';

/**
 * The board's operations (docs/design.md §15), the same for every door: the CLI, the
 * harness tools, `flotilla mcp`. Each change takes the board lock (lock.ts), re-reads what
 * it decides on, writes, and lets go; reads take no lock. `by` is the caller's identity,
 * found by the caller as `send` finds it (an agent id, or `human`), never given by a model.
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

export function boardOf(layout: Layout, name: string): BoardPaths {
  return layout.board(checkBoardName(name));
}

export async function addTask(layout: Layout, boardName: string, spec: NewTask, by: string): Promise<Task> {
  const board = boardOf(layout, boardName);
  const title = spec.title.trim();
  if (!title) throw new UsageError("a task needs a title, e.g. flotilla task add 'write the parser'");
  if (spec.id !== undefined) checkTaskId(spec.id);
  const blockedBy = [...new Set(spec.blockedBy ?? [])];
  for (const b of blockedBy) checkTaskId(b);
  const added = await withBoardLock(layout, board.name, () => {
    if (spec.id !== undefined && readTask(board, spec.id)) {
      throw new FlotillaError(`task '${spec.id}' already exists on board '${board.name}' — choose another id`, {
        code: 'task-exists',
      });
    }
    const id = spec.id ?? nextTaskId(board);
    if (blockedBy.includes(id))
      throw refusal('task-cycle', `refused: task '${id}' cannot be blocked by itself`, { task: id });
    const cycle = findCycle(id, blockedBy, (t) => readTask(board, t)?.blocked_by ?? []);
    if (cycle) {
      throw refusal(
        'task-cycle',
        `refused: blocked_by would make a cycle ${cycle.join(' → ')} — a task cannot wait on work that waits on it`,
        { task: id },
      );
    }
    const now = new Date().toISOString();
    const task: Task = {
      v: 1,
      id,
      board: board.name,
      title,
      body: spec.body ?? '',
      status: 'open',
      priority: spec.priority ?? 'normal',
      labels: [...new Set(spec.labels ?? [])],
      blocked_by: blockedBy,
      created_by: by,
      created_at: now,
      updated_at: now,
      claimed_by: null,
      claimed_at: null,
      finished_at: null,
      result: null,
      notes: [],
    };
    writeTask(board, task, undefined);
    audit(layout, { event: 'task_created', agent: by, board: board.name, task: id });
    return task;
  });
  // Outside the lock: a hook may take seconds, and the task is on the board either way.
  await taskCreatedHooks(layout, added, by);
  return added;
}

/** Why a task cannot be claimed now, or null. Reads its blockers. */
export function claimBlocker(board: BoardPaths, task: Task): string | null {
  if (task.status === 'claimed') return `it is claimed by ${task.claimed_by ?? '?'}`;
  if (task.status !== 'open') return `it is ${task.status}`;
  const waiting = task.blocked_by.filter((b) => {
    const dep = readTask(board, b);
    return !dep || !unblocks(dep.status);
  });
  return waiting.length > 0 ? `it is blocked by unfinished ${waiting.join(', ')}` : null;
}

/** The claim itself (lock held): a stale claim (claimant ended) is reopened first. */
function takeClaim(layout: Layout, board: BoardPaths, task: Task, by: string): Task {
  const current = reopenIfStale(layout, board, task);
  const why = claimBlocker(board, current);
  if (why) {
    const holder = current.status === 'claimed' ? current.claimed_by : null;
    const text = holder
      ? `task ${current.id} is already claimed by ${holder} (since ${current.claimed_at ?? '?'})`
      : `task ${current.id} cannot be claimed: ${why}`;
    throw refusal(
      'task-not-claimable',
      `refused: ${text} — 'flotilla task claim --next' takes the first claimable task`,
      { task: current.id, ...(holder ? { holder } : {}) },
    );
  }
  const now = new Date().toISOString();
  const next: Task = { ...current, status: 'claimed', claimed_by: by, claimed_at: now, updated_at: now };
  writeTask(board, next, current);
  audit(layout, { event: 'task_claimed', agent: by, board: board.name, task: current.id });
  return next;
}

export async function claimTask(layout: Layout, boardName: string, id: string, by: string): Promise<Task> {
  const board = boardOf(layout, boardName);
  checkTaskId(id);
  return withBoardLock(layout, board.name, () => takeClaim(layout, board, mustRead(board, id), by));
}

/** Claims the first claimable task by priority, then age; null when none is. */
export async function claimNext(layout: Layout, boardName: string, by: string): Promise<Task | null> {
  const board = boardOf(layout, boardName);
  return withBoardLock(layout, board.name, () => {
    for (const id of activeIds(board)) {
      const found = readTask(board, id);
      if (!found || isFinished(found.status)) {
        repairEntry(board, id, found);
        continue;
      }
      const task = reopenIfStale(layout, board, found);
      if (claimBlocker(board, task) === null) return takeClaim(layout, board, task, by);
    }
    return null;
  });
}

/** Gives a claim back: the task is open again. Only its claimant or a person may. */
export async function releaseTask(
  layout: Layout,
  boardName: string,
  id: string,
  by: string,
  why?: string,
): Promise<Task> {
  const board = boardOf(layout, boardName);
  checkTaskId(id);
  return withBoardLock(layout, board.name, () => {
    const task = mustRead(board, id);
    if (task.status !== 'claimed')
      throw refusal('task-not-claimed', `refused: task ${id} is ${task.status}, not claimed — nothing to release`, {
        task: id,
      });
    mayAct(task, by, 'release');
    const note = `released by ${by}${why ? `: ${why}` : ''}`;
    const next = reopened(task, by, note);
    writeTask(board, next, task);
    audit(layout, { event: 'task_released', agent: by, board: board.name, task: id, claimant: task.claimed_by });
    return next;
  });
}

export type Ending = 'done' | 'failed' | 'cancelled';

/**
 * Finishes a task. `done`/`failed`: its claimant, or a person. `cancelled`: its creator or a
 * person. `gate` (default: the TaskCompleted hooks, hooks.ts) runs before `done`, outside the
 * lock (a hook may take seconds): a string it returns refuses the ending with that feedback,
 * noted on the task, which stays claimed; the caller gets it as the refusal, and a claimant
 * who is not the caller gets it as mail (docs/hooks.md "Team hooks"). The write re-checks
 * everything under the lock.
 */
export async function finishTask(
  layout: Layout,
  boardName: string,
  id: string,
  by: string,
  status: Ending,
  result: string,
  gate?: (task: Task) => Promise<string | null>,
): Promise<Task> {
  const board = boardOf(layout, boardName);
  checkTaskId(id);
  const check = (task: Task): void => {
    if (isFinished(task.status))
      throw refusal('task-finished', `refused: task ${id} is already ${task.status}`, { task: id });
    if (status === 'cancelled') {
      if (by !== 'human' && by !== task.created_by)
        throw refusal(
          'task-not-yours',
          `refused: only the task's creator (${task.created_by}) or a person may cancel task ${id}`,
          { task: id },
        );
    } else {
      mayAct(task, by, status === 'done' ? 'mark done' : 'mark failed');
    }
  };
  const seen = mustRead(board, id);
  check(seen);
  const ending = (task: Task): Task => {
    const now = new Date().toISOString();
    return { ...task, status, finished_at: now, updated_at: now, result };
  };
  const refused = status === 'done' ? await (gate ?? completionGate(layout, by))(ending(seen)) : null;
  return withBoardLock(layout, board.name, async () => {
    const task = mustRead(board, id);
    check(task);
    if (refused !== null) {
      const now = new Date().toISOString();
      writeTask(
        board,
        {
          ...task,
          updated_at: now,
          notes: [...task.notes, { at: now, by: 'TaskCompleted hook', text: `completion refused: ${refused}` }],
        },
        task,
      );
      audit(layout, { event: 'task_refused', agent: by, board: board.name, task: id, claimant: task.claimed_by });
      if (task.claimed_by && task.claimed_by !== by && task.claimed_by !== 'human')
        await tellClaimant(layout, task, by, refused);
      throw refusal('task-completion-refused', `refused: the TaskCompleted hook kept task ${id} open: ${refused}`, {
        task: id,
      });
    }
    const next = ending(task);
    writeTask(board, next, task);
    audit(layout, {
      event: status === 'done' ? 'task_done' : status === 'failed' ? 'task_failed' : 'task_cancelled',
      agent: by,
      board: board.name,
      task: id,
    });
    return next;
  });
}

/**
 * Reopens every task an agent holds, on every board: called when it ends, however it ends
 * (its own ending, or the reaper's). Returns the tasks reopened.
 */
export async function reopenClaimsOf(layout: Layout, agentId: string, reason: string): Promise<Task[]> {
  const out: Task[] = [];
  for (const name of boardNames(layout)) {
    const board = layout.board(name);
    const mine = claimedIds(board).filter((id) => readTask(board, id)?.claimed_by === agentId);
    if (mine.length === 0) continue;
    await withBoardLock(layout, name, () => {
      for (const id of mine) {
        const task = readTask(board, id);
        if (!task || task.status !== 'claimed' || task.claimed_by !== agentId) continue;
        const next = reopened(task, agentId, `reopened: its claimant ${agentId} ended (${reason})`);
        writeTask(board, next, task);
        audit(layout, { event: 'task_reopened', agent: agentId, board: name, task: id, reason });
        out.push(next);
      }
    });
  }
  return out;
}

/** A claimed task whose claimant has ended goes back to open (lock held). */
function reopenIfStale(layout: Layout, board: BoardPaths, task: Task): Task {
  if (task.status !== 'claimed' || !task.claimed_by) return task;
  const gone = claimantGone(layout, task.claimed_by);
  if (!gone) return task;
  const next = reopened(task, task.claimed_by, `reopened: its claimant ${task.claimed_by} ${gone}`);
  writeTask(board, next, task);
  audit(layout, { event: 'task_reopened', agent: task.claimed_by, board: board.name, task: task.id, reason: gone });
  return next;
}

function mayAct(task: Task, by: string, what: string): void {
  if (by === 'human' || task.claimed_by === by) return;
  const holder = task.status === 'claimed' ? `its claimant (${task.claimed_by ?? '?'})` : 'whoever claims it';
  throw refusal('task-not-yours', `refused: only ${holder} or a person may ${what} task ${task.id} — claim it first`, {
    task: task.id,
    ...(task.claimed_by ? { holder: task.claimed_by } : {}),
  });
}

function mustRead(board: BoardPaths, id: string): Task {
  const task = readTask(board, id);
  if (!task)
    throw new FlotillaError(
      `no task '${id}' on board '${board.name}' — run 'flotilla task list --board ${board.name}' to see its tasks`,
      { code: 'not-found' },
    );
  return task;
}

/** Reopens the board's claims whose claimants have ended (a waiter's sweep, like status's reaping). */
export async function reopenStale(layout: Layout, boardName: string): Promise<Task[]> {
  const board = boardOf(layout, boardName);
  const stale = claimedIds(board).filter((id) => {
    const t = readTask(board, id);
    return t?.status === 'claimed' && t.claimed_by !== null && claimantGone(layout, t.claimed_by) !== null;
  });
  if (stale.length === 0) return [];
  return withBoardLock(layout, board.name, () => {
    const out: Task[] = [];
    for (const id of stale) {
      const task = readTask(board, id);
      if (!task) continue;
      const next = reopenIfStale(layout, board, task);
      if (next !== task) out.push(next);
    }
    return out;
  });
}

/**
 * A completion refused while someone else (a person) marked the claimant's task done: the
 * claimant hears the hook's feedback as mail, from Flotilla, so its model sees it.
 */
async function tellClaimant(layout: Layout, task: Task, by: string, feedback: string): Promise<void> {
  const { deliver } = await import('../inbox/deliver.js');
  const body = `${by} marked task ${task.id} ('${task.title}') on board '${task.board}' done, and the TaskCompleted hook refused it; the task is still yours:\n\n${feedback}`;
  try {
    await deliver(layout, {
      from: 'human',
      to: task.claimed_by!,
      kind: 'system',
      priority: 'high',
      summary: `task ${task.id}: completion refused by the TaskCompleted hook`,
      body,
    });
  } catch {
    // The refusal stands and is noted on the task; mail that cannot be written is not a reason to hide it.
  }
}
