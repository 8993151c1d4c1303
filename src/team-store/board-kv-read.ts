import type { SharedKv } from '../bus/shared.js';
import type { Layout } from '../layout/layout.js';
import type { BoardListing, Counts, ListedTask } from '../tasks/list.js';
import { activeName, checkBoardName, isFinished, parseTask, unblocks, type Task } from '../tasks/task.js';
import { judged, readAll, readOne } from './board-kv.js';
import {
  endEntries,
  endEntryOf,
  entryIsLive,
  isIndexed,
  openEntries,
  READ_BATCH,
  type EndEntry,
  type OpenEntry,
} from './board-kv-index.js';
import { fleetJudge, type FleetJudge } from './judge.js';

/**
 * Reading the fleet's boards on the bus (board-kv.ts writes them): one task, a board's
 * listing, every board's listing or counts, with claims judged as the next writer would judge
 * them. Through the indexes (board-kv-index.ts) once the bucket has them: the unfinished
 * tasks' values and the finished ones' names, so a board's history costs names, not values;
 * a bucket written before them is read whole, as before.
 */

/** One task as it reads now (a gone claimant's claim reads open), or undefined. */
export async function showTaskKv(
  layout: Layout,
  kv: SharedKv,
  boardName: string,
  id: string,
): Promise<Task | undefined> {
  const board = checkBoardName(boardName);
  const read = await readOne(kv, board, id);
  return read ? judged(fleetJudge(layout), read.task) : undefined;
}

const RECENT = 10;

/** What `task list` shows, from one read of the board's keys; claims judged as the next writer would. */
export async function listBoardKv(
  layout: Layout,
  kv: SharedKv,
  boardName: string,
  opts: { all?: boolean; limit?: number } = {},
): Promise<BoardListing> {
  const board = checkBoardName(boardName);
  const judge = fleetJudge(layout);
  if (!opts.all && (await isIndexed(kv))) {
    const [open, ended] = await Promise.all([openEntries(kv, board), endEntries(kv, board)]);
    return indexedListing(kv, judge, board, open, ended, opts.limit ?? 100);
  }
  return listing(board, await Promise.all((await readAll(kv, board)).map((t) => judged(judge, t))), opts);
}

/** Every board's listing from one read of the bucket (the dashboard's tasks view), boards by name. */
export async function listAllBoardsKv(layout: Layout, kv: SharedKv): Promise<BoardListing[]> {
  const judge = fleetJudge(layout);
  if (await isIndexed(kv)) return everyIndexedListing(kv, judge, 100);
  const byBoard = new Map<string, Task[]>();
  for (const v of await kv.values('*.*')) {
    const t = parseTask(v.value);
    if (!t) continue;
    byBoard.set(t.board, [...(byBoard.get(t.board) ?? []), await judged(judge, t)]);
  }
  return [...byBoard.keys()].sort().map((board) => listing(board, byBoard.get(board)!, {}));
}

function listing(board: string, all: Task[], opts: { all?: boolean; limit?: number }): BoardListing {
  const byId = new Map(all.map((t) => [t.id, t]));
  const listed = (t: Task): ListedTask => ({
    ...t,
    waiting_on:
      t.status === 'open'
        ? t.blocked_by.filter((b) => {
            const d = byId.get(b);
            return !d || !unblocks(d.status);
          })
        : [],
  });
  const counts: Counts = { open: 0, claimed: 0, done: 0, failed: 0, cancelled: 0 };
  for (const t of all) counts[t.status]++;
  if (opts.all) {
    all.sort((a, b) => (a.created_at < b.created_at ? -1 : a.created_at > b.created_at ? 1 : a.id < b.id ? -1 : 1));
    return { board, counts, tasks: all.map(listed), more: 0, recent: [] };
  }
  const unfinished = all.filter((t) => !isFinished(t.status)).sort((a, b) => (activeName(a) < activeName(b) ? -1 : 1));
  const limit = opts.limit ?? 100;
  const finished = all
    .filter((t) => isFinished(t.status))
    .sort((a, b) => ((a.finished_at ?? '') < (b.finished_at ?? '') ? -1 : 1));
  return {
    board,
    counts,
    tasks: unfinished.slice(0, limit).map(listed),
    more: Math.max(0, unfinished.length - limit),
    recent: finished.slice(-RECENT).map(listed),
  };
}

/** `task wait`'s look at a board: drained when nothing is claimed or claimable. */
export async function boardStateKv(
  layout: Layout,
  kv: SharedKv,
  boardName: string,
): Promise<{ drained: boolean; counts: Counts; stuck: string[] }> {
  const l = await listBoardKv(layout, kv, boardName, (await isIndexed(kv)) ? { limit: Infinity } : { all: true });
  const stuck: string[] = [];
  let busyNow = false;
  for (const t of l.tasks) {
    if (isFinished(t.status)) continue;
    if (t.status === 'claimed' || t.waiting_on.length === 0) {
      busyNow = true;
      break;
    }
    stuck.push(t.id);
  }
  return { drained: !busyNow, counts: l.counts, stuck: busyNow ? [] : stuck };
}

/** Every board's counts from one read of the bucket, claims judged as the next writer would. */
export async function allBoardCountsKv(layout: Layout, kv: SharedKv): Promise<{ board: string; counts: Counts }[]> {
  const judge = fleetJudge(layout);
  if (await isIndexed(kv))
    return (await everyIndexedListing(kv, judge, 0)).map(({ board, counts }) => ({ board, counts }));
  const byBoard = new Map<string, Counts>();
  for (const v of await kv.values('*.*')) {
    const t = parseTask(v.value);
    if (!t) continue;
    const seen = await judged(judge, t);
    const counts = byBoard.get(t.board) ?? { open: 0, claimed: 0, done: 0, failed: 0, cancelled: 0 };
    counts[seen.status]++;
    byBoard.set(t.board, counts);
  }
  return [...byBoard.entries()].sort((a, b) => (a[0] < b[0] ? -1 : 1)).map(([board, counts]) => ({ board, counts }));
}

/** Tasks read by key, a few at a time: id → task (missing ones left out). */
async function readTasks(kv: SharedKv, board: string, ids: string[]): Promise<Map<string, Task>> {
  const out = new Map<string, Task>();
  for (let i = 0; i < ids.length; i += 4 * READ_BATCH) {
    const reads = await Promise.all(ids.slice(i, i + 4 * READ_BATCH).map((id) => readOne(kv, board, id)));
    for (const r of reads) if (r) out.set(r.task.id, r.task);
  }
  return out;
}

/** Every board's listing through the indexes: one listing of each index's names for the whole bucket. */
async function everyIndexedListing(kv: SharedKv, judge: FleetJudge, limit: number): Promise<BoardListing[]> {
  const [open, ended] = await Promise.all([openEntries(kv, '*'), endEntries(kv, '*')]);
  const boards = [...new Set([...open.map((e) => e.board), ...ended.map((e) => e.board)])].sort();
  return Promise.all(
    boards.map((b) =>
      indexedListing(
        kv,
        judge,
        b,
        open.filter((e) => e.board === b),
        ended.filter((e) => e.board === b),
        limit,
      ),
    ),
  );
}

/**
 * What `task list` shows of one board from its indexes: the unfinished tasks' values (claims
 * judged), the counts of the finished from their end entries' names, and the last few to
 * finish read by key. A task finished behind an open entry not yet dropped counts as finished.
 */
async function indexedListing(
  kv: SharedKv,
  judge: FleetJudge,
  board: string,
  open: OpenEntry[],
  ended: EndEntry[],
  limit: number,
): Promise<BoardListing> {
  const read = await readTasks(
    kv,
    board,
    open.map((e) => e.id),
  );
  const endedById = new Map(ended.map((e) => [e.id, e]));
  const finishedHere = new Map<string, Task>();
  const unfinished: Task[] = [];
  for (const e of open) {
    const t = read.get(e.id);
    if (entryIsLive(e, t)) unfinished.push(await judged(judge, t!));
    else if (t && isFinished(t.status) && !endedById.has(t.id)) {
      endedById.set(t.id, endEntryOf(t));
      finishedHere.set(t.id, t);
    }
  }
  const unfinishedById = new Map(unfinished.map((t) => [t.id, t]));
  const status = (id: string): Task['status'] | undefined =>
    unfinishedById.get(id)?.status ?? endedById.get(id)?.status;
  const listed = (t: Task): ListedTask => ({
    ...t,
    waiting_on:
      t.status === 'open'
        ? t.blocked_by.filter((b) => {
            const s = status(b);
            return !s || !unblocks(s);
          })
        : [],
  });
  const counts: Counts = { open: 0, claimed: 0, done: 0, failed: 0, cancelled: 0 };
  for (const t of unfinished) counts[t.status]++;
  for (const e of endedById.values()) counts[e.status]++;
  const last = limit === 0 ? [] : [...endedById.values()].sort((a, b) => (a.name < b.name ? -1 : 1)).slice(-RECENT);
  const lastRead = await readTasks(
    kv,
    board,
    last.filter((e) => !finishedHere.has(e.id)).map((e) => e.id),
  );
  const recent = last.map((e) => finishedHere.get(e.id) ?? lastRead.get(e.id)).filter((t): t is Task => !!t);
  return {
    board,
    counts,
    tasks: unfinished.slice(0, limit).map(listed),
    more: Math.max(0, unfinished.length - limit),
    recent: recent.map(listed),
  };
}
