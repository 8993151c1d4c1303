import { audit } from '../audit/audit.js';
import { fleetBus } from '../bus/settings.js';
import { casBackoff, type SharedKv } from '../bus/shared.js';
import { FlotillaError } from '../errors.js';
import type { Layout } from '../layout/layout.js';
import { redactValue } from '../secrets/redact.js';
import * as decide from '../tasks/decide.js';
import type { Ending, NewTask } from '../tasks/decide.js';
import { completionGate, taskCreatedHooks } from '../tasks/hooks.js';
import { activeName, checkBoardName, checkTaskId, parseTask, reopened, type Task } from '../tasks/task.js';
import {
  ensureIndexed,
  entryIsLive,
  isIndexed,
  openEntries,
  openEntryFor,
  openKey,
  READ_BATCH,
  repairEntry,
  settleFinished,
} from './board-kv-index.js';
import { fleetJudge, type FleetJudge } from './judge.js';

/**
 * The fleet's boards on the bus (docs/design.md §15, §18; docs/decisions-hosts.md "One board and
 * one set of leases on the bus"): one key per task, `<board>.<id>`, in the fleet's BOARD
 * bucket, and `<board>.=seq` for the next automatic id. No lock: every change reads a task
 * with its revision, decides as the file board does, and writes it back only if its revision
 * is still the one read (bus/shared.ts), so of twenty claimants on any hosts exactly one
 * wins; a loser reads again and is refused with the holder's name, or moves to the next task.
 * Beside the tasks, the indexes of what is unfinished and what finished (board-kv-index.ts),
 * which every write here keeps, so `claim --next` reads the unfinished tasks alone.
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
  if (!found) throw decide.noSuchTask(board, id);
  return found;
}

function busy(board: string, id: string): FlotillaError {
  return new FlotillaError(`task '${id}' on board '${board}' kept changing under ${MAX_TRIES} tries — try again`, {
    code: 'board-busy',
  });
}

/**
 * The task as the next writer leaves it: a claim whose claimant is gone anywhere in the fleet reads open (judge.ts).
 */
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
  const checked = decide.checkNewTask(spec);
  await ensureIndexed(kv);
  const existing =
    checked.blockedBy.length > 0 ? new Map((await readAll(kv, board)).map((t) => [t.id, t])) : new Map<string, Task>();
  for (let tries = 0; tries < MAX_TRIES; tries++) {
    await casBackoff(tries);
    const id = spec.id ?? (await nextId(kv, board));
    decide.checkNoCycle(id, checked.blockedBy, (t) => existing.get(t)?.blocked_by ?? []);
    const task = decide.newTask(board, id, checked, spec, by);
    // Its open entry first: an add killed in between leaves an entry too many, never a task too few.
    await openEntryFor(kv, task);
    if ((await kv.create(taskKey(board, id), text(task))) === null) {
      // The entry goes unless it is the holder's own (made in the same millisecond: the same name).
      const holder = await readOne(kv, board, id);
      if (!holder || activeName(holder.task) !== activeName(task)) await kv.drop(openKey(board, activeName(task)));
      if (spec.id !== undefined) throw decide.taskExists(board, id);
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
  for (let tries = 0; ; tries++) {
    await casBackoff(tries);
    const seq = await kv.get(seqKey(board));
    const n = (seq ? Number(seq.value) || 0 : 0) + 1;
    const put = seq
      ? await kv.update(seqKey(board), String(n), seq.revision)
      : await kv.create(seqKey(board), String(n));
    if (put !== null) return `t${n}`;
  }
}

/** The blockers of `task` as the board holds them, read each by key. */
async function blockersOf(kv: SharedKv, task: Task): Promise<Map<string, Task>> {
  const read = await Promise.all(task.blocked_by.map((b) => readOne(kv, task.board, b)));
  return new Map(read.filter((r): r is Read => r !== null).map((r) => [r.task.id, r.task]));
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
  for (let tries = 0; tries < MAX_TRIES; tries++) {
    await casBackoff(tries);
    const read = mustBe(await readOne(kv, board, id), board, id);
    const current = await judged(judge, read.task);
    const deps = await blockersOf(kv, current);
    const next = decide.claimed(current, by, (b) => deps.get(b));
    if (await write(layout, kv, read, current, next)) {
      audit(layout, { event: 'task_claimed', agent: by, board, task: id });
      return next;
    }
  }
  throw busy(board, id);
}

/**
 * Claims the first claimable task by priority, then age; null when none is. Walks the open
 * index in claim order, reading a few tasks at a time with their revisions, so finished tasks
 * cost nothing; an entry that stands for no unfinished task is repaired on the way.
 */
export async function claimNextKv(layout: Layout, kv: SharedKv, boardName: string, by: string): Promise<Task | null> {
  const board = checkBoardName(boardName);
  await ensureIndexed(kv);
  const judge = fleetJudge(layout);
  for (let rounds = 0; rounds < MAX_TRIES; rounds++) {
    await casBackoff(rounds);
    const order = await openEntries(kv, board);
    const blockers = new Map<string, Promise<Task | undefined>>();
    const blocker = (id: string): Promise<Task | undefined> => {
      let b = blockers.get(id);
      if (!b) blockers.set(id, (b = readOne(kv, board, id).then((r) => r?.task)));
      return b;
    };
    let lost = false;
    for (let i = 0; i < order.length; i += READ_BATCH) {
      const batch = order.slice(i, i + READ_BATCH);
      const reads = await Promise.all(batch.map((e) => readOne(kv, board, e.id)));
      for (const [j, entry] of batch.entries()) {
        const read = reads[j] ?? null;
        if (!entryIsLive(entry, read?.task)) {
          await repairEntry(kv, entry, read?.task);
          continue;
        }
        const current = await judged(judge, read!.task);
        if (current.status !== 'open') continue;
        const deps = new Map<string, Task | undefined>();
        for (const b of current.blocked_by) deps.set(b, await blocker(b));
        if (decide.claimBlocker(current, (b) => deps.get(b)) !== null) continue;
        const next = decide.claimed(current, by, (b) => deps.get(b));
        if (await write(layout, kv, read!, current, next)) {
          audit(layout, { event: 'task_claimed', agent: by, board, task: next.id });
          return next;
        }
        // Another claimant took it between the read and the write: on to the next one.
        lost = true;
      }
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
    await casBackoff(tries);
    const read = mustBe(await readOne(kv, board, id), board, id);
    const task = read.task;
    const next = decide.released(task, by, why);
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
  const seen = mustBe(await readOne(kv, board, id), board, id);
  decide.checkEnding(seen.task, by, status);
  const refused =
    status === 'done' ? await (gate ?? completionGate(layout, by))(decide.ended(seen.task, status, result)) : null;
  for (let tries = 0; tries < MAX_TRIES; tries++) {
    await casBackoff(tries);
    const read = tries === 0 ? seen : mustBe(await readOne(kv, board, id), board, id);
    decide.checkEnding(read.task, by, status);
    if (refused !== null) {
      const noted = decide.refusedNoted(read.task, refused);
      if ((await kv.update(taskKey(board, id), text(noted), read.revision)) === null) continue;
      audit(layout, { event: 'task_refused', agent: by, board, task: id, claimant: read.task.claimed_by });
      if (decide.claimantToTell(read.task, by)) await tellClaimant(layout, read.task, by, refused);
      throw decide.completionRefused(id, refused);
    }
    const next = decide.ended(read.task, status, result);
    if ((await kv.update(taskKey(board, id), text(next), read.revision)) === null) continue;
    audit(layout, { event: decide.endEvent(status), agent: by, board, task: id });
    try {
      await settleFinished(kv, next);
    } catch {
      // The task is finished either way; its open entry stays, which readers check and `claim --next` repairs.
    }
    return next;
  }
  throw busy(board, id);
}

/**
 * A completion refused while someone else (a person) marked the claimant's task done: the
 * claimant hears the hook's feedback as mail on the bus, wherever its host (tasks/board.ts's
 * `tellClaimant` on one machine).
 */
async function tellClaimant(layout: Layout, task: Task, by: string, feedback: string): Promise<void> {
  try {
    await (await fleetBus(layout)).mail.deliver(decide.refusalMail(task, by, feedback));
  } catch {
    // The refusal stands and is noted on the task; mail that cannot be sent is not a reason to hide it.
  }
}

/** Reopens every task an agent holds, on every board of the fleet: called when it ends. */
export async function reopenClaimsOfKv(layout: Layout, kv: SharedKv, agentId: string, reason: string): Promise<Task[]> {
  const out: Task[] = [];
  const mine = (await unfinishedEverywhere(kv)).filter((t) => t.status === 'claimed' && t.claimed_by === agentId);
  for (const seen of mine) {
    for (let tries = 0; tries < MAX_TRIES; tries++) {
      await casBackoff(tries);
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

/**
 * Every board's unfinished tasks (and a few just finished, behind an entry not yet dropped): through the open index
 * once it is there.
 */
async function unfinishedEverywhere(kv: SharedKv): Promise<Task[]> {
  if (!(await isIndexed(kv))) return (await kv.values('*.*')).map((v) => parseTask(v.value)).filter((t) => t !== null);
  const out: Task[] = [];
  const entries = await openEntries(kv, '*');
  for (let i = 0; i < entries.length; i += 4 * READ_BATCH) {
    const reads = await Promise.all(entries.slice(i, i + 4 * READ_BATCH).map((e) => readOne(kv, e.board, e.id)));
    for (const r of reads) if (r) out.push(r.task);
  }
  return out;
}
