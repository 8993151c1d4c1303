import { FlotillaError } from '../errors.js';
import { withFileLock } from '../fleet/file-lock.js';
import type { Layout } from '../layout/layout.js';
import { settleLastEnded } from './store.js';

/**
 * One writer at a time per board: a lock file in the board's folder (src/fleet/file-lock.ts),
 * stepped over as soon as a killed holder's process is gone, and out of reach of an agent's
 * sandboxed command, which cannot write the fleet root. A writer holds it for one change: a
 * few file operations, the first of which settles what a killed writer may have left
 * (store.ts `settleLastEnded`). (docs/decisions.md, "Task boards: one lock per board".)
 */

const TIMEOUT_MS = 60_000;

export function withBoardLock<T>(layout: Layout, board: string, fn: () => T | Promise<T>): Promise<T> {
  return withFileLock(
    layout.board(board).lock,
    {
      timeoutMs: TIMEOUT_MS,
      busy: () =>
        new FlotillaError(
          `board '${board}' stayed locked for ${TIMEOUT_MS / 1000} s by another process — try again; if it persists, see 'flotilla status' for a stuck agent`,
          { code: 'board-busy' },
        ),
    },
    () => {
      settleLastEnded(layout.board(board));
      return fn();
    },
  );
}
