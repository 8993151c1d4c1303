import { closeSync, openSync, readFileSync, statSync, unlinkSync, writeSync } from 'node:fs';
import { FlotillaError } from '../errors.js';
import type { Layout } from '../layout/layout.js';

/**
 * One writer at a time per agent record. A record is read, changed and written back; a vendor
 * agent's shim, its CLI's hook processes and `flotilla cancel` all write the same record, and
 * two read-modify-writes that interleave lose one change — a hook's `lastLine` written over
 * a `cancelled` would bring an ended agent back to `working`. The lock is a file created with
 * O_EXCL that names its holder's pid; a writer holds it for one read and one rename. A lock
 * whose holder is gone (killed mid-write) is broken once its pid is dead, or after STALE_MS
 * whatever its pid says (a pid from another namespace cannot be checked). Synchronous, as
 * record writes are (src/fleet/registry.ts). docs/decisions.md, "Record writes are locked".
 */

const STALE_MS = 5_000;
const TIMEOUT_MS = 30_000;
const pause = new Int32Array(new SharedArrayBuffer(4));

export function withRecordLock<T>(layout: Layout, id: string, fn: () => T): T {
  const path = `${layout.registryTmp}/${id}.lock`;
  const deadline = Date.now() + TIMEOUT_MS;
  let wait = 1;
  for (;;) {
    let fd: number | undefined;
    try {
      fd = openSync(path, 'wx', 0o600);
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      // No registry to lock (a fleet root never set up): the read that follows says so.
      if (code === 'ENOENT') return fn();
      if (code !== 'EEXIST') throw err;
    }
    if (fd !== undefined) {
      try {
        writeSync(fd, String(process.pid));
      } finally {
        closeSync(fd);
      }
      try {
        return fn();
      } finally {
        try {
          unlinkSync(path);
        } catch {
          /* broken by another writer after STALE_MS: nothing left to free */
        }
      }
    }
    const holder = holderOf(path);
    if (holder === 'gone') continue;
    if (holder === 'dead') {
      try {
        unlinkSync(path);
      } catch {
        /* another writer broke it first */
      }
      continue;
    }
    if (Date.now() > deadline) {
      throw new FlotillaError(`agent '${id}''s record stayed locked for ${TIMEOUT_MS / 1000} s — remove ${path} if no flotilla process is running, then try again`, { code: 'record-busy' });
    }
    Atomics.wait(pause, 0, 0, wait + Math.random() * wait);
    wait = Math.min(wait * 2, 20);
  }
}

/** Whether the lock's holder may still be writing; 'gone' when the lock went meanwhile. */
function holderOf(path: string): 'alive' | 'dead' | 'gone' {
  let age: number;
  let pid: number;
  try {
    age = Date.now() - statSync(path).mtimeMs;
    pid = Number(readFileSync(path, 'utf8'));
  } catch {
    // Freed between the failed create and now: try again at once, and break nothing.
    return 'gone';
  }
  if (age > STALE_MS) return 'dead';
  // An empty file is a holder between its create and its write.
  if (!Number.isInteger(pid) || pid <= 0) return 'alive';
  try {
    process.kill(pid, 0);
    return 'alive';
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'ESRCH' ? 'dead' : 'alive';
  }
}
