import { FlotillaError } from '../errors.js';
import { withFileLock } from '../fleet/file-lock.js';
import type { Layout } from '../layout/layout.js';

/**
 * One `flotilla up` at a time per fleet. Two at once would each find no root
 * window and open one. The lock is a file in the fleet root (src/fleet/file-lock.ts): a killed
 * `up` is stepped over as soon as its process is gone, and no agent's command can hold it.
 * The second `up` waits for the first and then, `up` being
 * idempotent, finds its session and root and attaches to them.
 */

/** Opening a fleet takes seconds; far longer means the other `up` is stuck. */
const DEFAULT_TIMEOUT_MS = 180_000;

export interface UpLockOptions {
  /** Told once when another `up` holds the lock and this one waits. */
  onWait?: () => void;
  timeoutMs?: number;
}

export function withUpLock<T>(layout: Layout, fn: () => Promise<T>, opts: UpLockOptions = {}): Promise<T> {
  return withFileLock(
    layout.upLock,
    {
      timeoutMs: opts.timeoutMs ?? DEFAULT_TIMEOUT_MS,
      busy: () =>
        new FlotillaError(
          "another 'flotilla up' is still opening this fleet — wait for it to finish (or end it), then run 'flotilla up' again",
        ),
      ...(opts.onWait ? { onWait: opts.onWait } : {}),
    },
    fn,
  );
}
