import { readdirSync, readFileSync } from 'node:fs';

/** Test helpers for process tests: is a pid gone, and a fresh tool context. */

/**
 * True when `pid` no longer runs. A zombie counts as dead: it has exited and only waits for
 * its (new) parent to reap it, which in some containers' init never happens promptly.
 */
export function isDead(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return true;
  }
  // From /proc, not ps: procps is not in a minimal Debian, and a ps that never ran read as "dead".
  // The state letter follows the command's closing parenthesis; no file: the pid is gone.
  let stat: string;
  try {
    stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return true;
  }
  return stat.slice(stat.lastIndexOf(')') + 2).startsWith('Z');
}

/**
 * True while a process whose command line contains `text` runs: `pgrep -f` without procps,
 * which a minimal Debian lacks (a missing pgrep read as "no such process").
 */
export function runsWith(text: string): boolean {
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name) || Number(name) === process.pid) continue;
    try {
      if (readFileSync(`/proc/${name}/cmdline`, 'utf8').split('\0').join(' ').includes(text)) return true;
    } catch {
      // Gone meanwhile.
    }
  }
  return false;
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
