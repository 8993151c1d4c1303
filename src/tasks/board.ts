import { audit } from '../audit/audit.js';
import type { BoardPaths, Layout } from '../layout/layout.js';
import { claimantGone } from './claimant.js';
import * as decide from './decide.js';
import { completionGate, taskCreatedHooks } from './hooks.js';
import { withBoardLock } from './lock.js';
import { activeIds, boardNames, claimedIds, nextTaskId, readTask, repairEntry, writeTask } from './store.js';
import { checkBoardName, checkTaskId, isFinished, reopened, type Task } from './task.js';
import type { Ending, NewTask } from './decide.js';

export type { Ending, NewTask } from './decide.js';

/**
 * The board's operations (docs/design.md §15), the same for every door: the CLI, the
 * harness tools, `flotilla mcp`. Each change takes the board lock (lock.ts), re-reads what
 * it decides on, writes, and lets go; reads take no lock. `by` is the caller's identity,
 * found by the caller as `send` finds it (an agent id, or `human`), never given by a model.
 */

export function boardOf(layout: Layout, name: string): BoardPaths {
  return layout.board(checkBoardName(name));
}

export async function addTask(layout: Layout, boardName: string, spec: NewTask, by: string): Promise<Task> {
  const board = boardOf(layout, boardName);
  const checked = decide.checkNewTask(spec);
  const added = await withBoardLock(layout, board.name, () => {
    if (spec.id !== undefined && readTask(board, spec.id)) throw decide.taskExists(board.name, spec.id);
    const id = spec.id ?? nextTaskId(board);
    decide.checkNoCycle(id, checked.blockedBy, (t) => readTask(board, t)?.blocked_by ?? []);
    const task = decide.newTask(board.name, id, checked, spec, by);
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
  return decide.claimBlocker(task, (b) => readTask(board, b));
}

/** The claim itself (lock held): a stale claim (claimant ended) is reopened first. */
function takeClaim(layout: Layout, board: BoardPaths, task: Task, by: string): Task {
  const current = reopenIfStale(layout, board, task);
  const next = decide.claimed(current, by, (b) => readTask(board, b));
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
    const next = decide.released(task, by, why);
    writeTask(board, next, task);
    audit(layout, { event: 'task_released', agent: by, board: board.name, task: id, claimant: task.claimed_by });
    return next;
  });
}

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
  const seen = mustRead(board, id);
  decide.checkEnding(seen, by, status);
  const refused =
    status === 'done' ? await (gate ?? completionGate(layout, by))(decide.ended(seen, status, result)) : null;
  return withBoardLock(layout, board.name, async () => {
    const task = mustRead(board, id);
    decide.checkEnding(task, by, status);
    if (refused !== null) {
      writeTask(board, decide.refusedNoted(task, refused), task);
      audit(layout, { event: 'task_refused', agent: by, board: board.name, task: id, claimant: task.claimed_by });
      if (decide.claimantToTell(task, by)) await tellClaimant(layout, task, by, refused);
      throw decide.completionRefused(id, refused);
    }
    const next = decide.ended(task, status, result);
    writeTask(board, next, task);
    audit(layout, { event: decide.endEvent(status), agent: by, board: board.name, task: id });
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

function mustRead(board: BoardPaths, id: string): Task {
  const task = readTask(board, id);
  if (!task) throw decide.noSuchTask(board.name, id);
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
  try {
    await deliver(layout, decide.refusalMail(task, by, feedback));
  } catch {
    // The refusal stands and is noted on the task; mail that cannot be written is not a reason to hide it.
  }
}
