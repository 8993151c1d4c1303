import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync, realpathSync, unlinkSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { hostname } from 'node:os';
import { isErrno } from '../errors.js';
import { isProcessAlive, selfProcess } from '../fleet/proc.js';
import { writeFileAtomic } from '../layout/atomic.js';
import type { Layout } from '../layout/layout.js';
import { sleep } from '../sleep.js';
import { answers } from '../socket-answers.js';

/**
 * One scheduler per fleet root. The lock is a listening Unix socket in the fleet's state
 * (as slots are, src/fleet/slots.ts): binding is exclusive and the kernel lets go when the
 * holder dies, SIGKILL included. A socket file left by a dead holder refuses connections and
 * is removed, once the holder it names (`scheduler.json`: pid and start time) is gone too.
 * Two schedulers cleaning one stale file at once may both run for a moment; the fired-slot
 * markers (fire.ts) still keep every slot to one run, so the lock is about quiet, not about
 * correctness.
 */

export interface SchedulerHolder {
  pid: number;
  since: string;
  host: string;
  /** The holder's process start time (fleet/proc.ts), so a reused pid is not taken for it. */
  start?: string | null;
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

export function schedulerHolder(layout: Layout): SchedulerHolder | null {
  try {
    return JSON.parse(readFileSync(layout.schedulerInfo, 'utf8')) as SchedulerHolder;
  } catch {
    return null;
  }
}

/** Whether the holder the lock's info names is a live process of this host (its start time checked). */
function holderAlive(layout: Layout): boolean {
  const h = schedulerHolder(layout);
  return (
    h !== null &&
    h.host === hostname() &&
    h.pid !== selfProcess().pid &&
    typeof h.start === 'string' &&
    isProcessAlive(h.pid, h.start)
  );
}

/** Whether a scheduler holds the lock now (for `status` and `schedule list`). */
export function schedulerRunning(layout: Layout): Promise<boolean> {
  return answers(socketAddress(layout));
}

/**
 * Takes the lock, waiting while another scheduler holds it (`onWait` is told who, once).
 * Resolves null when `signal` aborts first.
 */
export async function acquireSchedulerLock(
  layout: Layout,
  opts: { onWait?: (holder: SchedulerHolder | null) => void; signal?: AbortSignal } = {},
): Promise<SchedulerLock | null> {
  mkdirSync(layout.state, { recursive: true });
  const address = socketAddress(layout);
  let told = false;
  while (!opts.signal?.aborted) {
    const got = await listen(address);
    if (got !== 'in-use') {
      const me = selfProcess();
      const info: SchedulerHolder = { pid: me.pid, since: new Date().toISOString(), host: hostname(), start: me.start };
      writeFileAtomic(layout.schedulerInfo, `${JSON.stringify(info)}\n`);
      return {
        release: () => {
          got.close();
        },
      };
    }
    // A socket that does not answer is stale only when the holder it names is gone too: a live
    // holder that missed one connection (a loaded machine) must not get a second scheduler beside it.
    if (!address.startsWith('\0') && !(await answers(address)) && !holderAlive(layout)) {
      try {
        unlinkSync(address);
      } catch {
        /* another scheduler cleaned it first */
      }
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
