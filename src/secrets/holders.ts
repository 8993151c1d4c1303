import { readdirSync, readFileSync } from 'node:fs';

/**
 * Processes that still hold a granted value in their environment when the grant ends
 * (docs/security.md "Secrets", step 5): a server a command started in the background, a
 * command still running. Found by reading `/proc/<pid>/environ` of every process this
 * user may read (Linux; elsewhere nothing is found) for the exact `VAR=value` entry, and
 * ended with SIGTERM. The harness reports each in its pane and the audit trail.
 */
export function endHolders(varName: string, value: Buffer): { pid: number; command: string }[] {
  let pids: string[];
  try {
    pids = readdirSync('/proc').filter((n) => /^\d+$/.test(n));
  } catch {
    return [];
  }
  const needle = Buffer.concat([Buffer.from(`${varName}=`), value]);
  const ended: { pid: number; command: string }[] = [];
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
    try {
      process.kill(pid, 'SIGTERM');
      ended.push({ pid, command });
    } catch {
      // Gone, or not ours to signal.
    }
  }
  needle.fill(0);
  return ended;
}

/** Whether the NUL-separated `environ` has exactly the entry `needle` (not a longer value starting with it). */
function holdsEntry(environ: Buffer, needle: Buffer): boolean {
  for (let at = environ.indexOf(needle); at >= 0; at = environ.indexOf(needle, at + 1)) {
    const end = at + needle.length;
    if ((at === 0 || environ[at - 1] === 0) && (end === environ.length || environ[end] === 0)) return true;
  }
  return false;
}
