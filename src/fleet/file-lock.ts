import { mkdirSync, readlinkSync, symlinkSync, unlinkSync } from 'node:fs';
import { dirname } from 'node:path';
import { FlotillaError } from '../errors.js';
import { sleep } from '../sleep.js';
import { joinQueue, leaveQueue, myTurn } from './lock-queue.js';
import { isProcessAlive, selfProcess } from './proc.js';

/**
 * A lock held by one process at a time: a symbolic link made in one step whose target names
 * its holder's pid and that process's start time. A holder that died (SIGKILL included) is stepped over as
 * soon as its process is gone — a pid the kernel gave to another process reads as gone.
 * Holders are Flotilla processes on this host (a sandboxed command's fleet commands run in
 * its harness, through the door). Lock files live in the fleet root, which an agent's
 * sandboxed command cannot write (docs/security.md), so no command can take or hold one —
 * unlike a bound socket name, which any process sharing the network namespace can squat.
 * docs/decisions-hosts.md, "Locks are files in the fleet root".
 */

const pause = new Int32Array(new SharedArrayBuffer(4));
/** This process as a lock file names it, worked out once. */
let self: string | undefined;

export interface LockWait {
  timeoutMs: number;
  /** The error when the lock stays taken past the timeout. */
  busy: () => FlotillaError;
  /** Called once, when the lock is found taken. */
  onWait?: () => void;
}

/** Runs `fn` holding the lock at `path`, waiting for it synchronously (record writes are synchronous). */
export function withFileLockSync<T>(path: string, wait: LockWait, fn: () => T): T {
  const deadline = Date.now() + wait.timeoutMs;
  let delay = 1;
  while (!take(path)) {
    if (delay === 1) wait.onWait?.();
    if (Date.now() > deadline) throw wait.busy();
    Atomics.wait(pause, 0, 0, delay + Math.random() * delay);
    delay = Math.min(delay * 2, 20);
  }
  try {
    return fn();
  } finally {
    release(path);
  }
}

/** Runs `fn` holding the lock at `path`, waiting for it without blocking the event loop. */
export async function withFileLock<T>(path: string, wait: LockWait, fn: () => T | Promise<T>): Promise<T> {
  const deadline = Date.now() + wait.timeoutMs;
  let delay = 1;
  // Waiters queue (lock-queue.ts): first in line, first to take it.
  let ticket: string | undefined;
  try {
    for (;;) {
      const turn = myTurn(path, ticket);
      if (turn && take(path)) break;
      if (ticket === undefined) {
        wait.onWait?.();
        ticket = joinQueue(path);
        continue;
      }
      if (Date.now() > deadline) throw wait.busy();
      // First in line looks again at once; the rest back off (random: in step they would look together).
      await sleep(turn ? 1 : delay + Math.random() * delay);
      if (!turn) delay = Math.min(delay * 2, 8);
    }
  } finally {
    if (ticket !== undefined) leaveQueue(path, ticket);
  }
  try {
    return await fn();
  } finally {
    release(path);
  }
}

/**
 * Takes the lock if it is free or its holder is gone; false while a live holder has it. The lock
 * is a symbolic link whose target names the holder: made in one step with its content, and a
 * short target needs no data block, so a full disk (ENOSPC) can neither fail the take half-way
 * nor leave a lock that names no one.
 */
function take(path: string): boolean {
  self ??= `${selfProcess().pid} ${selfProcess().start ?? ''}`;
  for (;;) {
    try {
      symlinkSync(self, path);
      return true;
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (code === 'ENOENT') {
        mkdirSync(dirname(path), { recursive: true });
        continue;
      }
      if (code !== 'EEXIST') throw err;
    }
    const holder = holderOf(path);
    if (holder.state === 'alive') return false;
    if (holder.state === 'dead' && !breakDead(path, holder.name)) return false;
  }
}

/**
 * Removes the lock at `path` if it still names the dead holder `dead`; false while another
 * process is breaking it. Two processes that both found the holder dead would otherwise both
 * remove the lock — the second removing the one the first had just taken, and both would
 * hold it. So a breaker first takes `<path>.break`, then looks again: only a lock still naming
 * the dead holder goes. (A breaker killed inside leaves a guard whose holder is gone: the next
 * one removes it; a lock it would then remove twice is still checked by name first.)
 */
function breakDead(path: string, dead: string | null): boolean {
  const guard = `${path}.break`;
  try {
    symlinkSync(self!, guard);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    const other = holderOf(guard);
    if (other.state === 'dead') release(guard);
    return false;
  }
  try {
    if (nameOf(path) === dead) release(path);
  } finally {
    release(guard);
  }
  return true;
}

/** The holder a lock names; null for something that is not one of our links; undefined when there is none. */
function nameOf(path: string): string | null | undefined {
  try {
    return readlinkSync(path);
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'ENOENT' ? undefined : null;
  }
}

function release(path: string): void {
  try {
    unlinkSync(path);
  } catch {
    /* already gone: nothing left to free */
  }
}

/**
 * Whether the lock's holder may still be working ('gone' when the lock went meanwhile), and the name it holds it by.
 */
function holderOf(path: string): { state: 'alive' | 'dead' | 'gone'; name: string | null } {
  const name = nameOf(path);
  // Freed between the failed take and now: try again at once, and break nothing.
  if (name === undefined) return { state: 'gone', name: null };
  // Not a link: nothing of ours made it; it names no live holder.
  if (name === null) return { state: 'dead', name: null };
  const [pid, ...start] = name.split(' ');
  return { state: isProcessAlive(Number(pid), start.join(' ') || null) ? 'alive' : 'dead', name };
}
