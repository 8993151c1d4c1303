import { readdirSync, readFileSync } from 'node:fs';
import { isErrno } from '../errors.js';

/** A process whose environment holds a granted value. */
export interface Holder {
  pid: number;
  /** Its command line, cut to 120 characters (`?` when unreadable). */
  command: string;
}

/**
 * Processes that still hold a granted value in their environment when the grant ends
 * (docs/security-trust.md "Secrets", step 5): a server a command started in the background, a
 * command still running — and, with a value the person also has in their own environment,
 * the person's shells, editor and tmux server, and other agents. Found by reading
 * `/proc/<pid>/environ` of every process this user may read (Linux; elsewhere nothing is
 * found) for the exact `VAR=value` entry. Only those `mayEnd` accepts (what the agent's
 * harness started) get SIGTERM; the rest are `left`, for the harness to report.
 */
export function endHolders(
  varName: string,
  value: Buffer,
  mayEnd: (pid: number) => boolean,
): { ended: Holder[]; left: Holder[] } {
  const ended: Holder[] = [];
  const left: Holder[] = [];
  // Judged before any signal: ending one holder (a sandbox) can end or re-parent the others.
  const judged = findHolders(varName, value).map((h) => ({ h, ours: mayEnd(h.pid) }));
  for (const { h, ours } of judged) {
    if (!ours) {
      left.push(h);
      continue;
    }
    try {
      process.kill(h.pid, 'SIGTERM');
      ended.push(h);
    } catch (err) {
      // Gone already: ended with a holder signalled before it (a sandbox whose pid namespace
      // it was in). Anything else (EPERM) was not ours to end.
      (isErrno(err, 'ESRCH') ? ended : left).push(h);
    }
  }
  return { ended, left };
}

/** Every process but this one with exactly `VAR=value` in its environment. */
export function findHolders(varName: string, value: Buffer): Holder[] {
  let pids: string[];
  try {
    pids = readdirSync('/proc').filter((n) => /^\d+$/.test(n));
  } catch {
    return [];
  }
  const needle = Buffer.concat([Buffer.from(`${varName}=`), value]);
  const found: Holder[] = [];
  for (const name of pids) {
    const pid = Number(name);
    if (pid === process.pid) continue;
    let environ: Buffer;
    try {
      environ = readFileSync(`/proc/${pid}/environ`);
    } catch {
      continue;
    }
    const whole = holdsEntry(environ, needle);
    environ.fill(0);
    if (!whole) continue;
    let command = '?';
    try {
      command = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').filter(Boolean).join(' ').slice(0, 120) || '?';
    } catch {
      // Gone already.
    }
    found.push({ pid, command });
  }
  needle.fill(0);
  return found;
}

/** Whether the NUL-separated `environ` has exactly the entry `needle` (not a longer value starting with it). */
function holdsEntry(environ: Buffer, needle: Buffer): boolean {
  for (let at = environ.indexOf(needle); at >= 0; at = environ.indexOf(needle, at + 1)) {
    const end = at + needle.length;
    if ((at === 0 || environ[at - 1] === 0) && (end === environ.length || environ[end] === 0)) return true;
  }
  return false;
}
