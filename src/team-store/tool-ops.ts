import type { Layout } from '../layout/layout.js';
import type { TaskToolOps } from '../tools/task-board.js';
import { countsLine, formatListing } from '../tasks/view.js';
import { addTask, claimNext, claimTask, finishTask, listBoard, releaseTask, waitForBoard } from './board.js';

/**
 * The task tools' operations for one caller (docs/design.md §15): `by` is the agent the
 * tools were built for (or `human` for a person's `flotilla mcp`), never a model's word. The
 * harness and `flotilla mcp` both build the tools from these. `gate` is the TaskCompleted
 * check a completion passes first (finishTask).
 */
export function taskToolOps(
  layout: Layout,
  by: string,
  defaultBoard: string,
  gate?: Parameters<typeof finishTask>[6],
): TaskToolOps {
  return {
    defaultBoard,
    create: (t) => addTask(layout, t.board, t, by),
    list: async (board, all) => formatListing(await listBoard(layout, board, { all })),
    claim: (board, id) => (id === null ? claimNext(layout, board, by) : claimTask(layout, board, id, by)),
    async update(board, id, action, text) {
      if (action === 'release') return releaseTask(layout, board, id, by, text || undefined);
      const ending = action === 'done' ? 'done' : action === 'failed' ? 'failed' : 'cancelled';
      return finishTask(layout, board, id, by, ending, text, ending === 'done' ? gate : undefined);
    },
    async wait(board, timeoutSecs, signal) {
      const w = await waitForBoard(layout, board, {
        ...(timeoutSecs === undefined ? {} : { timeoutMs: timeoutSecs * 1000 }),
        signal,
      });
      const state = w.drained
        ? 'The board has drained.'
        : signal.aborted
          ? 'Stopped waiting.'
          : `Still busy after ${timeoutSecs ?? 0} s.`;
      const stuck =
        w.stuck.length > 0
          ? `\n${w.stuck.join(', ')} can never be claimed: each waits on a task that failed or does not exist.`
          : '';
      return `${state}\n${countsLine(board, w.counts)}${stuck}`;
    },
  };
}
