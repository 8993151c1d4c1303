import { audit } from '../audit/audit.js';
import type { SharedKv } from '../bus/shared.js';
import { FlotillaError, refusal, UsageError } from '../errors.js';
import type { Layout } from '../layout/layout.js';
import { redactValue } from '../secrets/redact.js';
import type { Ending, NewTask } from '../tasks/board.js';
import { findCycle } from '../tasks/graph.js';
import { completionGate, taskCreatedHooks } from '../tasks/hooks.js';
import {
  activeName,
  checkBoardName,
  checkTaskId,
  isFinished,
  parseTask,
  reopened,
  unblocks,
  type Task,
} from '../tasks/task.js';
import { fleetJudge, type FleetJudge } from './judge.js';

/**
 * The fleet's boards on the bus (docs/design.md §15, §18; docs/decisions-hosts.md "One board and
 * one set of leases on the bus"): one key per task, `<board>.<id>`, in the fleet's BOARD
 * bucket, and `<board>.=seq` for the next automatic id. No lock: every change reads a task
 * with its revision, decides as the file board does, and writes it back only if its revision
 * is still the one read (bus/shared.ts), so of twenty claimants on any hosts exactly one
 * wins; a loser reads again and is refused with the holder's name, or moves to the next task.
 */

const seqKey = (board: string): string => `${board}.=seq`;
const taskKey = (board: string, id: string): string => `${board}.${id}`;
/** Writers that keep losing the race for one key give up with a retryable error after this many reads. */
const MAX_TRIES = 50;

interface Read {
  task: Task;
  revision: number;
}

export async function readOne(kv: SharedKv, board: string, id: string): Promise<Read | null> {
  const e = await kv.get(taskKey(board, id));
  const task = e && parseTask(e.value);
  return task ? { task, revision: e.revision } : null;
}

/** Every task of a board, in no order. */
export async function readAll(kv: SharedKv, board: string): Promise<Task[]> {
  const all = await kv.values(`${board}.*`);
  return all
    .filter((v) => v.key !== seqKey(board))
    .map((v) => parseTask(v.value))
    .filter((t): t is Task => t !== null);
}

/** Every task of a board as stored, in no order. */
export function boardTasksKv(kv: SharedKv, boardName: string): Promise<Task[]> {
  return readAll(kv, checkBoardName(boardName));
}

const text = (task: Task): string => JSON.stringify(redactValue(task));

function mustBe(found: Read | null, board: string, id: string): Read {
  if (!found)
    throw new FlotillaError(
      `no task '${id}' on board '${board}' — run 'flotilla task list --board ${board}' to see its tasks`,
      { code: 'not-found' },
    );
  return found;
}

function busy(board: string, id: string): FlotillaError {
  return new FlotillaError(`task '${id}' on board '${board}' kept changing under ${MAX_TRIES} tries — try again`, {
    code: 'board-busy',
  });
}

/** The task as the next writer leaves it: a claim whose claimant is gone anywhere in the fleet reads open (judge.ts). */
export async function judged(judge: FleetJudge, task: Task): Promise<Task> {
  const claimant = task.claimed_by;
  if (task.status !== 'claimed' || !claimant) return task;
  const gone = await judge.gone(claimant, task.claimed_at);
  return gone ? reopened(task, claimant, `reopened: its claimant ${claimant} ${gone}`) : task;
}

/** Writes `next` over the revision read; audits the reopening `judged` implied. */
async function write(layout: Layout, kv: SharedKv, read: Read, before: Task, next: Task): Promise<boolean> {
  const ok = (await kv.update(taskKey(next.board, next.id), text(next), read.revision)) !== null;
  if (ok && read.task.status === 'claimed' && before.status === 'open') {
    audit(layout, {
      event: 'task_reopened',
      agent: read.task.claimed_by ?? undefined,
      board: next.board,
      task: next.id,
      reason: before.notes.at(-1)?.text ?? 'its claimant is gone',
    });
  }
  return ok;
}

export async function addTaskKv(
  layout: Layout,
  kv: SharedKv,
  boardName: string,
  spec: NewTask,
  by: string,
): Promise<Task> {
  const board = checkBoardName(boardName);
  const title = spec.title.trim();
  if (!title) throw new UsageError("a task needs a title, e.g. flotilla task add 'write the parser'");
  if (spec.id !== undefined) checkTaskId(spec.id);
  const blockedBy = [...new Set(spec.blockedBy ?? [])];
  for (const b of blockedBy) checkTaskId(b);
  const existing =
    blockedBy.length > 0 ? new Map((await readAll(kv, board)).map((t) => [t.id, t])) : new Map<string, Task>();
  for (let tries = 0; tries < MAX_TRIES; tries++) {
    const id = spec.id ?? (await nextId(kv, board));
    if (blockedBy.includes(id))
      throw refusal('task-cycle', `refused: task '${id}' cannot be blocked by itself`, { task: id });
    const cycle = findCycle(id, blockedBy, (t) => existing.get(t)?.blocked_by ?? []);
    if (cycle)
      throw refusal(
        'task-cycle',
        `refused: blocked_by would make a cycle ${cycle.join(' → ')} — a task cannot wait on work that waits on it`,
        { task: id },
      );
    const now = new Date().toISOString();
    const task: Task = {
      v: 1,
      id,
      board,
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
    if ((await kv.create(taskKey(board, id), text(task))) === null) {
      if (spec.id !== undefined)
        throw new FlotillaError(`task '${id}' already exists on board '${board}' — choose another id`, {
          code: 'task-exists',
        });
      // A task named by hand holds the number: take the next.
      continue;
    }
    audit(layout, { event: 'task_created', agent: by, board, task: id });
    await taskCreatedHooks(layout, task, by);
    return task;
  }
  throw busy(board, spec.id ?? 't?');
}

/** The next `t<n>`: the board's counter, moved on with compare-and-set. */
async function nextId(kv: SharedKv, board: string): Promise<string> {
  for (;;) {
    const seq = await kv.get(seqKey(board));
    const n = (seq ? Number(seq.value) || 0 : 0) + 1;
    const put = seq
      ? await kv.update(seqKey(board), String(n), seq.revision)
      : await kv.create(seqKey(board), String(n));
    if (put !== null) return `t${n}`;
  }
}

/** Why a task cannot be claimed now, or null; `blocker` reads a blocker's status. */
async function claimBlocker(task: Task, blocker: (id: string) => Promise<Task | undefined>): Promise<string | null> {
  if (task.status === 'claimed') return `it is claimed by ${task.claimed_by ?? '?'}`;
  if (task.status !== 'open') return `it is ${task.status}`;
  const waiting: string[] = [];
  for (const b of task.blocked_by) {
    const dep = await blocker(b);
    if (!dep || !unblocks(dep.status)) waiting.push(b);
  }
  return waiting.length > 0 ? `it is blocked by unfinished ${waiting.join(', ')}` : null;
}

function claimed(task: Task, by: string): Task {
  const now = new Date().toISOString();
  return { ...task, status: 'claimed', claimed_by: by, claimed_at: now, updated_at: now };
}

export async function claimTaskKv(
  layout: Layout,
  kv: SharedKv,
  boardName: string,
  id: string,
  by: string,
): Promise<Task> {
  const board = checkBoardName(boardName);
  checkTaskId(id);
  const judge = fleetJudge(layout);
  const blocker = async (b: string) => (await readOne(kv, board, b))?.task;
  for (let tries = 0; tries < MAX_TRIES; tries++) {
    const read = mustBe(await readOne(kv, board, id), board, id);
    const current = await judged(judge, read.task);
    const why = await claimBlocker(current, blocker);
    if (why) {
      const holder = current.status === 'claimed' ? current.claimed_by : null;
      const text = holder
        ? `task ${id} is already claimed by ${holder} (since ${current.claimed_at ?? '?'})`
        : `task ${id} cannot be claimed: ${why}`;
      throw refusal(
        'task-not-claimable',
        `refused: ${text} — 'flotilla task claim --next' takes the first claimable task`,
        { task: id, ...(holder ? { holder } : {}) },
      );
    }
    const next = claimed(current, by);
    if (await write(layout, kv, read, current, next)) {
      audit(layout, { event: 'task_claimed', agent: by, board, task: id });
      return next;
    }
  }
  throw busy(board, id);
}

/** Claims the first claimable task by priority, then age; null when none is. */
export async function claimNextKv(layout: Layout, kv: SharedKv, boardName: string, by: string): Promise<Task | null> {
  const board = checkBoardName(boardName);
  const judge = fleetJudge(layout);
  for (let rounds = 0; rounds < MAX_TRIES; rounds++) {
    const all = await readAll(kv, board);
    const byId = new Map(all.map((t) => [t.id, t]));
    const order = all
      .filter((t) => !isFinished(t.status))
      .map((t) => [activeName(t), t] as const)
      .sort((a, b) => (a[0] < b[0] ? -1 : 1));
    let lost = false;
    for (const [, seen] of order) {
      const candidate = await judged(judge, seen);
      if ((await claimBlocker(candidate, async (b) => byId.get(b))) !== null) continue;
      // Read with its revision: the listing may be a moment old.
      const read = await readOne(kv, board, seen.id);
      if (!read) continue;
      const current = await judged(judge, read.task);
      if ((await claimBlocker(current, async (b) => byId.get(b))) !== null) continue;
      const next = claimed(current, by);
      if (await write(layout, kv, read, current, next)) {
        audit(layout, { event: 'task_claimed', agent: by, board, task: next.id });
        return next;
      }
      // Another claimant took it between the read and the write: on to the next one.
      lost = true;
    }
    if (!lost) return null;
  }
  return null;
}

/** Gives a claim back: the task is open again. Only its claimant or a person may. */
export async function releaseTaskKv(
  layout: Layout,
  kv: SharedKv,
  boardName: string,
  id: string,
  by: string,
  why?: string,
): Promise<Task> {
  const board = checkBoardName(boardName);
  checkTaskId(id);
  for (let tries = 0; tries < MAX_TRIES; tries++) {
    const read = mustBe(await readOne(kv, board, id), board, id);
    const task = read.task;
    if (task.status !== 'claimed')
      throw refusal('task-not-claimed', `refused: task ${id} is ${task.status}, not claimed — nothing to release`, {
        task: id,
      });
    mayAct(task, by, 'release');
    const next = reopened(task, by, `released by ${by}${why ? `: ${why}` : ''}`);
    if ((await kv.update(taskKey(board, id), text(next), read.revision)) !== null) {
      audit(layout, { event: 'task_released', agent: by, board, task: id, claimant: task.claimed_by });
      return next;
    }
  }
  throw busy(board, id);
}

/** Finishes a task, as tasks/board.ts `finishTask` does; the TaskCompleted gate runs first, on this host. */
export async function finishTaskKv(
  layout: Layout,
  kv: SharedKv,
  boardName: string,
  id: string,
  by: string,
  status: Ending,
  result: string,
  gate?: (task: Task) => Promise<string | null>,
): Promise<Task> {
  const board = checkBoardName(boardName);
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
  const ending = (task: Task): Task => {
    const now = new Date().toISOString();
    return { ...task, status, finished_at: now, updated_at: now, result };
  };
  const seen = mustBe(await readOne(kv, board, id), board, id);
  check(seen.task);
  const refused = status === 'done' ? await (gate ?? completionGate(layout, by))(ending(seen.task)) : null;
  for (let tries = 0; tries < MAX_TRIES; tries++) {
    const read = tries === 0 ? seen : mustBe(await readOne(kv, board, id), board, id);
    check(read.task);
    if (refused !== null) {
      const now = new Date().toISOString();
      const noted = {
        ...read.task,
        updated_at: now,
        notes: [...read.task.notes, { at: now, by: 'TaskCompleted hook', text: `completion refused: ${refused}` }],
      };
      if ((await kv.update(taskKey(board, id), text(noted), read.revision)) === null) continue;
      audit(layout, { event: 'task_refused', agent: by, board, task: id, claimant: read.task.claimed_by });
      throw refusal('task-completion-refused', `refused: the TaskCompleted hook kept task ${id} open: ${refused}`, {
        task: id,
      });
    }
    const next = ending(read.task);
    if ((await kv.update(taskKey(board, id), text(next), read.revision)) === null) continue;
    audit(layout, {
      event: status === 'done' ? 'task_done' : status === 'failed' ? 'task_failed' : 'task_cancelled',
      agent: by,
      board,
      task: id,
    });
    return next;
  }
  throw busy(board, id);
}

/** Reopens every task an agent holds, on every board of the fleet: called when it ends. */
export async function reopenClaimsOfKv(layout: Layout, kv: SharedKv, agentId: string, reason: string): Promise<Task[]> {
  const out: Task[] = [];
  const mine = (await kv.values('*.*'))
    .map((v) => parseTask(v.value))
    .filter((t): t is Task => t?.status === 'claimed' && t.claimed_by === agentId);
  for (const seen of mine) {
    for (let tries = 0; tries < MAX_TRIES; tries++) {
      const read = await readOne(kv, seen.board, seen.id);
      if (!read || read.task.status !== 'claimed' || read.task.claimed_by !== agentId) break;
      const next = reopened(read.task, agentId, `reopened: its claimant ${agentId} ended (${reason})`);
      if ((await kv.update(taskKey(seen.board, seen.id), text(next), read.revision)) === null) continue;
      audit(layout, { event: 'task_reopened', agent: agentId, board: seen.board, task: seen.id, reason });
      out.push(next);
      break;
    }
  }
  return out;
}

function mayAct(task: Task, by: string, what: string): void {
  if (by === 'human' || task.claimed_by === by) return;
  const holder = task.status === 'claimed' ? `its claimant (${task.claimed_by ?? '?'})` : 'whoever claims it';
  throw refusal('task-not-yours', `refused: only ${holder} or a person may ${what} task ${task.id} — claim it first`, {
    task: task.id,
    ...(task.claimed_by ? { holder: task.claimed_by } : {}),
  });
}
