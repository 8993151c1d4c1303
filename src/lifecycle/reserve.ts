import { closeSync, mkdirSync, openSync, readdirSync, unlinkSync, writeFileSync, writeSync } from 'node:fs';
import type { Layout } from '../layout/layout.js';
import { isErrno } from '../errors.js';

/**
 * Room kept for an agent's ending on a full disk: a 64 KiB file (`markers/<id>.reserve`)
 * written at start and deleted first thing when the agent ends, so its terminal record, its
 * completion, the transcript's end line and the marker files can still be written after
 * ENOSPC stopped its work. (A record is ~3 KiB; a completion body at most ~5 KiB.)
 */
export const RESERVE_BYTES = 64 * 1024;

export function reservePath(layout: Layout, agentId: string): string {
  return layout.marker(`${agentId}.reserve`);
}

/** Writes the reserve; false when there is no room for it (the agent still runs). */
export function holdReserve(layout: Layout, agentId: string): boolean {
  let fd: number | undefined;
  try {
    fd = openSync(reservePath(layout, agentId), 'w', 0o600);
    writeSync(fd, Buffer.alloc(RESERVE_BYTES, 0x2e));
    return true;
  } catch {
    releaseReserve(layout, agentId);
    return false;
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

/** Frees the reserve (idempotent). */
export function releaseReserve(layout: Layout, agentId: string): void {
  try {
    unlinkSync(reservePath(layout, agentId));
  } catch {
    /* none */
  }
}

/**
 * Marks an ending under way (`state/index/finishing/<id>`, holding the ender's pid). It is
 * removed as the ending's last step; one left by a dead harness tells the reaper to finish
 * what is owed (completion, stop hooks) although the record is already terminal. Its own
 * folder keeps the reaper's look at it as cheap as the live index, whatever the history.
 */
export function markFinishing(layout: Layout, agentId: string): void {
  try {
    writeFileSync(layout.finishing(agentId), `${process.pid}\n`);
  } catch (err) {
    if (!isErrno(err, 'ENOENT')) return; // A full disk: the record still tells most of it.
    try {
      mkdirSync(layout.finishingDir, { recursive: true });
      writeFileSync(layout.finishing(agentId), `${process.pid}\n`);
    } catch {
      /* as above */
    }
  }
}

export function clearFinishing(layout: Layout, agentId: string): void {
  try {
    unlinkSync(layout.finishing(agentId));
  } catch {
    /* never written, or done */
  }
}

/** Agents whose ending was begun and not finished (their enders may still be at it). */
export function finishingIds(layout: Layout): string[] {
  try {
    return readdirSync(layout.finishingDir).filter((n) => !n.startsWith('.'));
  } catch {
    return [];
  }
}
