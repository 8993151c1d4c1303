import { closeSync, mkdirSync, openSync, readdirSync, unlinkSync } from 'node:fs';
import { isErrno } from '../errors.js';
import { isProcessAlive, selfProcess } from './proc.js';

/**
 * The line waiting for a lock file (file-lock.ts `withFileLock`): without it the lock goes to
 * whoever looks first after a release, and that is nearly always the process that just
 * released it, running on — twenty processes claiming and finishing tasks back to back left
 * some waiting past the board's 60 s timeout. A waiter takes a ticket (an empty file in
 * `<lock>.queue/`, named by time, pid and the pid's start time); a newcomer may take the lock
 * only while no one is in line, and a waiter only when its ticket is first. A ticket whose
 * process is gone (SIGKILL) is stepped over and removed by whoever finds it first in line.
 * docs/decisions-hosts.md, "Locks are files in the fleet root".
 */

let counter = 0;

const queueDir = (lock: string): string => `${lock}.queue`;

function tickets(lock: string): string[] {
  try {
    return readdirSync(queueDir(lock)).sort();
  } catch (err) {
    if (isErrno(err, 'ENOENT')) return [];
    throw err;
  }
}

function alive(ticket: string): boolean {
  const [, pid, ...start] = ticket.split('-');
  return isProcessAlive(Number(pid), start.join('-') || null);
}

function removeTicket(lock: string, ticket: string): void {
  try {
    unlinkSync(`${queueDir(lock)}/${ticket}`);
  } catch {
    /* already removed: a ticket is removed by its owner, or by whoever found its process gone */
  }
}

/** Joins the line; returns the ticket. */
export function joinQueue(lock: string): string {
  const ticket = `${String(Date.now()).padStart(15, '0')}.${String(counter++).padStart(6, '0')}-${selfProcess().pid}-${selfProcess().start ?? ''}`;
  const path = `${queueDir(lock)}/${ticket}`;
  try {
    closeSync(openSync(path, 'wx'));
  } catch (err) {
    if (!isErrno(err, 'ENOENT')) throw err;
    mkdirSync(queueDir(lock), { recursive: true });
    closeSync(openSync(path, 'wx'));
  }
  return ticket;
}

export function leaveQueue(lock: string, ticket: string): void {
  removeTicket(lock, ticket);
}

/** Whether `ticket` (undefined: a newcomer not in line) may try to take the lock now. */
export function myTurn(lock: string, ticket: string | undefined): boolean {
  for (const first of tickets(lock)) {
    if (first === ticket) return true;
    if (alive(first)) return false;
    removeTicket(lock, first);
  }
  return ticket === undefined;
}
