import { closeSync, mkdirSync, openSync, readdirSync, readFileSync, renameSync, unlinkSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { isErrno } from '../errors.js';
import { sleep } from '../sleep.js';
import type { Layout } from '../layout/layout.js';
import { newSortableId } from './ids.js';
import { isProcessAlive, processStartTime } from './proc.js';

/**
 * The line for a running slot (issue 14): an agent whose work arrives while every slot is
 * busy — and a `spawn-agent --queue` — waits here, and they get slots in arrival order.
 *
 * The slots themselves stay exact (`slots.ts`: the kernel decides who binds a name); this
 * queue only decides who may *try*. A waiter writes a ticket `slots/queue/<sortable id>`
 * holding its pid and start time, and tries for a slot only while its ticket is the oldest
 * live one, every `POLL_MS`. A ticket of a dead process is removed by whoever sees it, so a
 * killed waiter never blocks the line. Someone arriving when nobody waits tries at once.
 */

const POLL_MS = 100;

export interface QueueOptions {
  signal?: AbortSignal;
  /** Told once when the first try failed and the caller joins the line. */
  onWait?: () => void | Promise<void>;
}

function queueDir(layout: Layout): string {
  return join(layout.slotsDir, 'queue');
}

interface Ticket {
  name: string;
  pid: number;
  start: string | null;
}

function readTickets(dir: string): Ticket[] {
  let names: string[];
  try {
    names = readdirSync(dir).filter((n) => !n.startsWith('.')).sort();
  } catch (err) {
    if (isErrno(err, 'ENOENT')) return [];
    throw err;
  }
  const out: Ticket[] = [];
  for (const name of names) {
    try {
      const [pid, start] = readFileSync(join(dir, name), 'utf8').split('\n');
      out.push({ name, pid: Number(pid), start: start || null });
    } catch {
      // Taken out of the line meanwhile.
    }
  }
  return out;
}

/** Live tickets in arrival order; tickets of dead processes are removed on the way. */
function liveTickets(dir: string): Ticket[] {
  return readTickets(dir).filter((t) => {
    if (Number.isInteger(t.pid) && t.pid > 0 && isProcessAlive(t.pid, t.start)) return true;
    try { unlinkSync(join(dir, t.name)); } catch { /* someone else removed it */ }
    return false;
  });
}

/** A ticket appears whole (written under a dot name, then renamed), so no reader sees it empty. */
function writeTicket(dir: string, name: string): void {
  const tmp = join(dir, `.${name}.${process.pid}`);
  const fd = openSync(tmp, 'w');
  writeSync(fd, `${process.pid}\n${processStartTime(process.pid) ?? ''}\n`);
  closeSync(fd);
  renameSync(tmp, join(dir, name));
}

/** How many wait in line now. */
export function waitingCount(layout: Layout): number {
  return liveTickets(queueDir(layout)).length;
}

/**
 * Runs `attempt` in turn: at once when nobody waits, otherwise (and after a failed first
 * try) from a ticket in the line, when it is the oldest. Resolves with what `attempt` gave,
 * or null when aborted. The ticket is always removed.
 */
export async function inTurn<T>(layout: Layout, attempt: () => Promise<T | null>, opts: QueueOptions = {}): Promise<T | null> {
  const dir = queueDir(layout);
  if (liveTickets(dir).length === 0) {
    const got = await attempt();
    if (got !== null) return got;
  }
  if (opts.signal?.aborted) return null;
  mkdirSync(dir, { recursive: true });
  const name = newSortableId();
  writeTicket(dir, name);
  try {
    await opts.onWait?.();
    for (;;) {
      if (opts.signal?.aborted) return null;
      const line = liveTickets(dir);
      if (line[0]?.name === name) {
        const got = await attempt();
        if (got !== null) return got;
      } else if (!line.some((t) => t.name === name)) {
        // Removed by mistake (a process that took this pid for dead): back in at the same place.
        writeTicket(dir, name);
      }
      await sleep(POLL_MS, opts.signal);
    }
  } finally {
    try { unlinkSync(join(dir, name)); } catch { /* already gone */ }
  }
}
