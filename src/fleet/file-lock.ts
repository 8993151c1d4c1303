import { closeSync, mkdirSync, openSync, readFileSync, unlinkSync, writeSync } from 'node:fs';
import { dirname } from 'node:path';
import { FlotillaError } from '../errors.js';
import { sleep } from '../sleep.js';
import { isProcessAlive, processStartTime } from './proc.js';

/**
 * A lock held by one process at a time: a file created with O_EXCL that names its holder's
 * pid and that process's start time. A holder that died (SIGKILL included) is stepped over as
 * soon as its process is gone — a pid the kernel gave to another process reads as gone.
 * Holders are Flotilla processes on this host (a sandboxed command's fleet commands run in
 * its harness, through the door). Lock files live in the fleet root, which an agent's
 * sandboxed command cannot write (docs/security.md), so no command can take or hold one —
 * unlike a bound socket name, which any process sharing the network namespace can squat.
 * docs/decisions.md, "Locks are files in the fleet root".
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
  while (!take(path)) {
    if (delay === 1) wait.onWait?.();
    if (Date.now() > deadline) throw wait.busy();
    // Random back-off: twenty claimants retrying in step would collide again each time.
    await sleep(delay + Math.random() * delay);
    delay = Math.min(delay * 2, 25);
  }
  try {
    return await fn();
  } finally {
    release(path);
  }
}

/** Takes the lock if it is free or its holder is gone; false while a live holder has it. */
function take(path: string): boolean {
  for (;;) {
    let fd: number;
    try {
      fd = openSync(path, 'wx', 0o600);
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (code === 'ENOENT') {
        mkdirSync(dirname(path), { recursive: true });
        continue;
      }
      if (code !== 'EEXIST') throw err;
      const holder = holderOf(path);
      if (holder === 'alive') return false;
      if (holder === 'dead') {
        try {
          unlinkSync(path);
        } catch {
          /* another process broke it first */
        }
      }
      continue;
    }
    try {
      writeSync(fd, (self ??= `${process.pid} ${processStartTime(process.pid) ?? ''}`));
    } finally {
      closeSync(fd);
    }
    return true;
  }
}

function release(path: string): void {
  try {
    unlinkSync(path);
  } catch {
    /* already gone: nothing left to free */
  }
}

/** Whether the lock's holder may still be working; 'gone' when the lock went meanwhile. */
function holderOf(path: string): 'alive' | 'dead' | 'gone' {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch {
    // Freed between the failed create and now: try again at once, and break nothing.
    return 'gone';
  }
  // An empty file is a holder between its create and its write.
  if (text === '') return 'alive';
  const [pid, ...start] = text.split(' ');
  return isProcessAlive(Number(pid), start.join(' ') || null) ? 'alive' : 'dead';
}
