import { sharedKvFor } from '../bus/shared.js';
import type { Layout } from '../layout/layout.js';
import * as files from '../tasks/board.js';
import type { Ending, NewTask } from '../tasks/board.js';
import type { BoardListing, Counts } from '../tasks/list.js';
import type { Task } from '../tasks/task.js';
import type { BoardWait } from '../tasks/wait.js';
import { sleep } from '../sleep.js';
import * as kv from './board-kv.js';
import * as kvRead from './board-kv-read.js';

/**
 * The board operations every door calls (docs/design.md §15), kept where `fleet.bus` says:
 * files in this host's fleet root on `maildir` (tasks/board.ts, as on one machine), or the
 * fleet's one BOARD bucket on `nats://` (board-kv.ts), so a task added on one host is claimed
 * on another (docs/decisions-hosts.md "One board and one set of leases on the bus").
 */

const store = (layout: Layout) => sharedKvFor(layout, 'board');

export async function addTask(layout: Layout, board: string, spec: NewTask, by: string): Promise<Task> {
  const s = await store(layout);
  return s ? kv.addTaskKv(layout, s, board, spec, by) : files.addTask(layout, board, spec, by);
}

export async function claimTask(layout: Layout, board: string, id: string, by: string): Promise<Task> {
  const s = await store(layout);
  return s ? kv.claimTaskKv(layout, s, board, id, by) : files.claimTask(layout, board, id, by);
}

export async function claimNext(layout: Layout, board: string, by: string): Promise<Task | null> {
  const s = await store(layout);
  return s ? kv.claimNextKv(layout, s, board, by) : files.claimNext(layout, board, by);
}

export async function releaseTask(layout: Layout, board: string, id: string, by: string, why?: string): Promise<Task> {
  const s = await store(layout);
  return s ? kv.releaseTaskKv(layout, s, board, id, by, why) : files.releaseTask(layout, board, id, by, why);
}

export async function finishTask(
  layout: Layout,
  board: string,
  id: string,
  by: string,
  status: Ending,
  result: string,
  gate?: (task: Task) => Promise<string | null>,
): Promise<Task> {
  const s = await store(layout);
  return s
    ? kv.finishTaskKv(layout, s, board, id, by, status, result, gate)
    : files.finishTask(layout, board, id, by, status, result, gate);
}

/** Every claim of an agent that ended goes back to open, on every board it can be on. */
export async function reopenClaimsOf(layout: Layout, agentId: string, reason: string): Promise<Task[]> {
  const s = await store(layout);
  return s ? kv.reopenClaimsOfKv(layout, s, agentId, reason) : files.reopenClaimsOf(layout, agentId, reason);
}

export async function listBoard(
  layout: Layout,
  board: string,
  opts: { all?: boolean; limit?: number } = {},
): Promise<BoardListing> {
  const s = await store(layout);
  if (s) return kvRead.listBoardKv(layout, s, board, opts);
  const { listBoard: list } = await import('../tasks/list.js');
  return list(layout, board, opts);
}

/**
 * Every board's listing, boards by name (the dashboard's tasks view): one read of the bus's bucket, or each board here.
 */
export async function listAllBoards(layout: Layout): Promise<BoardListing[]> {
  const s = await store(layout);
  if (s) return kvRead.listAllBoardsKv(layout, s);
  const [{ boardNames }, list] = await Promise.all([import('../tasks/store.js'), import('../tasks/list.js')]);
  const out: BoardListing[] = [];
  for (const board of boardNames(layout).sort()) {
    try {
      out.push(list.listBoard(layout, board));
    } catch {
      // A folder that is not a board (a bad name) is not the reader's to judge.
    }
  }
  return out;
}

/** Every task of a board as stored, in no order (who has a part in it: broadcast's `board:NAME`). */
export async function boardTasks(layout: Layout, board: string): Promise<Task[]> {
  const s = await store(layout);
  if (s) return kv.boardTasksKv(s, board);
  const { allIds, readTask } = await import('../tasks/store.js');
  const paths = files.boardOf(layout, board);
  return allIds(paths).flatMap((id) => readTask(paths, id) ?? []);
}

/** One task as it reads now (a gone claimant's claim reads open), or undefined. */
export async function showTask(layout: Layout, board: string, id: string): Promise<Task | undefined> {
  const s = await store(layout);
  if (s) return kvRead.showTaskKv(layout, s, board, id);
  const [{ readTask }, { judgedClaim }] = await Promise.all([
    import('../tasks/store.js'),
    import('../tasks/claimant.js'),
  ]);
  const stored = readTask(files.boardOf(layout, board), id);
  return stored && judgedClaim(layout, stored);
}

const POLL_MS = 250;

/** `task wait`: until the board has drained (tasks/wait.ts). */
export async function waitForBoard(
  layout: Layout,
  board: string,
  opts: { timeoutMs?: number; signal?: AbortSignal } = {},
): Promise<BoardWait> {
  const s = await store(layout);
  if (!s) return (await import('../tasks/wait.js')).waitForBoard(layout, board, opts);
  const deadline = opts.timeoutMs === undefined ? Infinity : Date.now() + opts.timeoutMs;
  for (;;) {
    const state = await kvRead.boardStateKv(layout, s, board);
    if (state.drained || Date.now() >= deadline || opts.signal?.aborted) return state;
    await sleep(POLL_MS, opts.signal);
  }
}

/** Every board's counts (status's lines, §15): one read of the bus's board bucket, or each board's indexes here. */
export async function allBoardCounts(layout: Layout): Promise<{ board: string; counts: Counts }[]> {
  const s = await store(layout);
  if (s) return kvRead.allBoardCountsKv(layout, s);
  return (await import('../tasks/list.js')).everyBoardCounts(layout);
}
