import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync, realpathSync, unlinkSync } from 'node:fs';
import { createConnection, createServer, type Server } from 'node:net';
import { hostname } from 'node:os';
import { isErrno } from '../errors.js';
import { writeFileAtomic } from '../layout/atomic.js';
import type { Layout } from '../layout/layout.js';
import { sleep } from '../sleep.js';

/**
 * One scheduler per fleet root. The lock is a listening Unix socket in the fleet's state
 * (as slots are, src/fleet/slots.ts): binding is exclusive and the kernel lets go when the
 * holder dies, SIGKILL included. A socket file left by a dead holder refuses connections and
 * is removed. Two schedulers cleaning one stale file at once may both run for a moment; the
 * fired-slot markers (fire.ts) still keep every slot to one run, so the lock is about quiet,
 * not about correctness.
 */

export interface SchedulerHolder {
  pid: number;
  since: string;
  host: string;
}

export interface SchedulerLock {
  release(): void;
}

const MAX_SOCKET_PATH = 107;

function socketAddress(layout: Layout): string {
  if (layout.schedulerSocket.length <= MAX_SOCKET_PATH || process.platform !== 'linux') return layout.schedulerSocket;
  const hash = createHash('sha256').update(realpathSync(layout.root)).digest('hex').slice(0, 24);
  return `\0flotilla-${hash}-scheduler`;
}

function listen(address: string): Promise<Server | 'in-use'> {
  return new Promise((resolve, reject) => {
    const server = createServer((s) => s.end());
    server.once('error', (err) => (isErrno(err, 'EADDRINUSE') ? resolve('in-use') : reject(err)));
    server.listen(address, () => resolve(server));
  });
}

function answers(address: string): Promise<boolean> {
  return new Promise((resolve) => {
    const s = createConnection(address);
    s.once('connect', () => { s.destroy(); resolve(true); });
    s.once('error', () => resolve(false));
  });
}

export function schedulerHolder(layout: Layout): SchedulerHolder | null {
  try {
    return JSON.parse(readFileSync(layout.schedulerInfo, 'utf8')) as SchedulerHolder;
  } catch {
    return null;
  }
}

/** Whether a scheduler holds the lock now (for `status` and `schedule list`). */
export function schedulerRunning(layout: Layout): Promise<boolean> {
  return answers(socketAddress(layout));
}

/**
 * Takes the lock, waiting while another scheduler holds it (`onWait` is told who, once).
 * Resolves null when `signal` aborts first.
 */
export async function acquireSchedulerLock(layout: Layout, opts: { onWait?: (holder: SchedulerHolder | null) => void; signal?: AbortSignal } = {}): Promise<SchedulerLock | null> {
  mkdirSync(layout.state, { recursive: true });
  const address = socketAddress(layout);
  let told = false;
  while (!opts.signal?.aborted) {
    const got = await listen(address);
    if (got !== 'in-use') {
      const info: SchedulerHolder = { pid: process.pid, since: new Date().toISOString(), host: hostname() };
      writeFileAtomic(layout.schedulerInfo, `${JSON.stringify(info)}\n`);
      return { release: () => { got.close(); } };
    }
    if (!address.startsWith('\0') && !(await answers(address))) {
      try { unlinkSync(address); } catch { /* another scheduler cleaned it first */ }
      continue;
    }
    if (!told) {
      told = true;
      opts.onWait?.(schedulerHolder(layout));
    }
    await sleep(500, opts.signal);
  }
  return null;
}
