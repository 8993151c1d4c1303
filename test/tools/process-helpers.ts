import { execa } from 'execa';
import { readFileSync } from 'node:fs';

/** Test helpers for process tests: is a pid gone, and a fresh tool context. */

/**
 * True when `pid` no longer runs. A zombie counts as dead: it has exited and only waits for
 * its (new) parent to reap it, which in some containers' init never happens promptly.
 */
export async function isDead(pid: number): Promise<boolean> {
  try {
    process.kill(pid, 0);
  } catch {
    return true;
  }
  const r = await execa('ps', ['-o', 'stat=', '-p', String(pid)], { reject: false });
  return r.stdout.trim() === '' || r.stdout.trim().startsWith('Z');
}

export function readPid(file: string): number {
  const pid = Number(readFileSync(file, 'utf8').trim());
  if (!Number.isInteger(pid) || pid <= 0) throw new Error(`no pid in ${file}`);
  return pid;
}

/** True once `file` holds a whole pid (a shell creates the file before it writes to it). */
export function hasPid(file: string): boolean {
  try {
    return /^\d+\n$/.test(readFileSync(file, 'utf8'));
  } catch {
    return false;
  }
}

export function ctxFor(cwd: string, signal: AbortSignal = new AbortController().signal) {
  return { signal, cwd, agentId: 'tester-abc123' };
}
