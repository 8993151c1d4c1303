import { closeSync, mkdirSync, openSync, readdirSync, readFileSync, renameSync, unlinkSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { isErrno } from '../errors.js';
import { sleep } from '../sleep.js';
import type { Layout } from '../layout/layout.js';
import { newSortableId } from './ids.js';
import { isProcessAlive, selfProcess } from './proc.js';

/**
 * The line for a running slot (§5.2): an agent whose work arrives while every slot is
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
  /** The agent waiting, written on its ticket so `status` and the dashboard can show who is in line and where. */
  agentId?: string;
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
  agentId: string | null;
}

function readTickets(dir: string): Ticket[] {
  let names: string[];
  try {
    names = readdirSync(dir)
      .filter((n) => !n.startsWith('.'))
      .sort();
  } catch (err) {
    if (isErrno(err, 'ENOENT')) return [];
    throw err;
  }
  const out: Ticket[] = [];
  for (const name of names) {
    try {
      const [pid, start, agentId] = readFileSync(join(dir, name), 'utf8').split('\n');
      out.push({ name, pid: Number(pid), start: start || null, agentId: agentId || null });
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
    try {
      unlinkSync(join(dir, t.name));
    } catch {
      /* someone else removed it */
    }
    return false;
  });
}

/** A ticket appears whole (written under a dot name, then renamed), so no reader sees it empty. */
function writeTicket(dir: string, name: string, agentId: string | undefined): void {
  const tmp = join(dir, `.${name}.${selfProcess().pid}`);
  const fd = openSync(tmp, 'w');
  const me = selfProcess();
  writeSync(fd, `${me.pid}\n${me.start ?? ''}\n${agentId ?? ''}\n`);
  closeSync(fd);
  renameSync(tmp, join(dir, name));
}

/** Who waits in line for a running slot, first in line first; `position` counts from 1. */
export interface InLine {
  /** The agent waiting (null: a ticket written before tickets named their agent). */
  agentId: string | null;
  pid: number;
  position: number;
}

/** The line as it stands now (read-only but for dead processes' tickets, which anyone may remove). */
export function queueLine(layout: Layout): InLine[] {
  return liveTickets(queueDir(layout)).map((t, i) => ({ agentId: t.agentId, pid: t.pid, position: i + 1 }));
}

/**
 * Runs `attempt` in turn: at once when nobody waits, otherwise (and after a failed first
 * try) from a ticket in the line, when it is the oldest. Resolves with what `attempt` gave,
 * or null when aborted. The ticket is always removed.
 */
export async function inTurn<T>(
  layout: Layout,
  attempt: () => Promise<T | null>,
  opts: QueueOptions = {},
): Promise<T | null> {
  const dir = queueDir(layout);
  if (liveTickets(dir).length === 0) {
    const got = await attempt();
    if (got !== null) return got;
  }
  if (opts.signal?.aborted) return null;
  mkdirSync(dir, { recursive: true });
  const name = newSortableId();
  writeTicket(dir, name, opts.agentId);
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
        writeTicket(dir, name, opts.agentId);
      }
      await sleep(POLL_MS, opts.signal);
    }
  } finally {
    try {
      unlinkSync(join(dir, name));
    } catch {
      /* already gone */
    }
  }
}
