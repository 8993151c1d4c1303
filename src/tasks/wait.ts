import { existsSync } from 'node:fs';
import type { Layout } from '../layout/layout.js';
import { sleep } from '../sleep.js';
import { claimBlocker, boardOf, reopenStale } from './board.js';
import { withBoardLock } from './lock.js';
import { boardCounts, type Counts } from './list.js';
import { activeIds, readTask } from './store.js';

/**
 * `task wait` / `wait_for_tasks` (docs/design.md §15): returns once the board has drained —
 * nothing claimed and nothing left that could be claimed (done, failed, cancelled, or open
 * but waiting on a task that failed or does not exist). Each poll also reopens claims whose
 * claimant ended, so a waiter never waits on a dead agent's task.
 */
export interface BoardWait {
  drained: boolean;
  counts: Counts;
  /** Open tasks that can never be claimed as things stand (waiting on failed or missing tasks). */
  stuck: string[];
}

const POLL_MS = 250;

export async function waitForBoard(
  layout: Layout,
  name: string,
  opts: { timeoutMs?: number; signal?: AbortSignal } = {},
): Promise<BoardWait> {
  const deadline = opts.timeoutMs === undefined ? Infinity : Date.now() + opts.timeoutMs;
  for (;;) {
    await reopenStale(layout, name);
    let state = boardState(layout, name);
    // A writer changes a task's index entries, its file and the ended log one after another (store.ts), so a
    // read while one is midway can say "drained" beside "1 claimed": that answer is read again under the
    // board's lock, where no writer is midway. A board with no folder has no writer (and gets none made).
    if (state.drained && existsSync(boardOf(layout, name).dir))
      state = await withBoardLock(layout, name, () => boardState(layout, name));
    if (state.drained || Date.now() >= deadline || opts.signal?.aborted) return state;
    await sleep(POLL_MS, opts.signal);
  }
}

export function boardState(layout: Layout, name: string): BoardWait {
  const board = boardOf(layout, name);
  const stuck: string[] = [];
  let busy = false;
  for (const id of activeIds(board)) {
    const t = readTask(board, id);
    if (!t || t.status === 'done' || t.status === 'failed' || t.status === 'cancelled') continue;
    if (t.status === 'claimed' || claimBlocker(board, t) === null) {
      busy = true;
      break;
    }
    stuck.push(id);
  }
  return { drained: !busy, counts: boardCounts(layout, name), stuck: busy ? [] : stuck };
}
