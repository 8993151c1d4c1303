import { closeSync, mkdirSync, openSync, writeSync } from 'node:fs';
import { dirname } from 'node:path';
import { isErrno } from '../errors.js';
import type { Layout } from '../layout/layout.js';

/**
 * Runs an agent's stop hooks exactly once (§9), whichever process reaches its first
 * terminal state first — the harness on a clean exit, the reaper after a crash. The claim
 * is an O_EXCL create of a marker file: one creator wins, every other caller sees EEXIST and
 * skips. The claim comes before the run, so a process dying mid-hook means the hook ran at
 * most once rather than twice. Returns true when this call ran `run`.
 */
export async function stopHookOnce(layout: Layout, agentId: string, run: () => Promise<void>): Promise<boolean> {
  const marker = layout.stopHookMarker(agentId);
  let fd: number;
  try {
    fd = claim(marker);
  } catch (err) {
    if (isErrno(err, 'EEXIST')) return false;
    throw err;
  }
  try {
    // Who claimed it, for a person wondering why a hook ran (or did not).
    writeSync(fd, JSON.stringify({ pid: process.pid, claimed_at: new Date().toISOString() }) + '\n');
  } finally {
    closeSync(fd);
  }
  await run();
  return true;
}

function claim(marker: string): number {
  try {
    return openSync(marker, 'wx', 0o644);
  } catch (err) {
    if (!isErrno(err, 'ENOENT')) throw err;
    mkdirSync(dirname(marker), { recursive: true });
    return openSync(marker, 'wx', 0o644);
  }
}
