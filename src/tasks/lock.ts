import { FlotillaError } from '../errors.js';
import { tryLock } from '../fleet/slots.js';
import type { Layout } from '../layout/layout.js';
import { sleep } from '../sleep.js';

/**
 * One writer at a time per board. The lock is a bound socket name like a running slot
 * (fleet/slots.ts), which the kernel frees the instant its holder dies — SIGKILL included —
 * so a killed writer never leaves a stale lock, and no one ever has to guess whether a
 * holder is still alive. A writer holds it for one change: a few file operations.
 * (docs/decisions.md, "Task boards: one lock per board".)
 */

const TIMEOUT_MS = 60_000;

export async function withBoardLock<T>(layout: Layout, board: string, fn: () => T | Promise<T>): Promise<T> {
  const deadline = Date.now() + TIMEOUT_MS;
  let wait = 1;
  let lock = await tryLock(layout, `board-${board}`);
  while (!lock) {
    if (Date.now() > deadline) {
      throw new FlotillaError(`board '${board}' stayed locked for ${TIMEOUT_MS / 1000} s by another process — try again; if it persists, see 'flotilla status' for a stuck agent`, { code: 'board-busy' });
    }
    // Random back-off: twenty claimants retrying in step would collide again each time.
    await sleep(wait + Math.random() * wait);
    wait = Math.min(wait * 2, 25);
    lock = await tryLock(layout, `board-${board}`);
  }
  try {
    return await fn();
  } finally {
    lock.release();
  }
}
