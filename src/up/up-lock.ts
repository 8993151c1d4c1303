import { FlotillaError } from '../errors.js';
import { tryLock } from '../fleet/slots.js';
import type { Layout } from '../layout/layout.js';
import { sleep } from '../sleep.js';

/**
 * One `flotilla up` at a time per fleet. Two at once would each find no root
 * window and open one. The lock is a bound socket name like a running slot, so a killed `up`
 * never leaves it behind. The second `up` waits for the first and then, `up` being
 * idempotent, finds its session and root and attaches to them.
 */

const POLL_MS = 100;
/** Opening a fleet takes seconds; far longer means the other `up` is stuck. */
const DEFAULT_TIMEOUT_MS = 180_000;

export interface UpLockOptions {
  /** Told once when another `up` holds the lock and this one waits. */
  onWait?: () => void;
  timeoutMs?: number;
}

export async function withUpLock<T>(layout: Layout, fn: () => Promise<T>, opts: UpLockOptions = {}): Promise<T> {
  const deadline = Date.now() + (opts.timeoutMs ?? DEFAULT_TIMEOUT_MS);
  let lock = await tryLock(layout, 'up');
  if (!lock) opts.onWait?.();
  while (!lock) {
    if (Date.now() > deadline) {
      throw new FlotillaError("another 'flotilla up' is still opening this fleet — wait for it to finish (or end it), then run 'flotilla up' again");
    }
    await sleep(POLL_MS);
    lock = await tryLock(layout, 'up');
  }
  try {
    return await fn();
  } finally {
    lock.release();
  }
}
