import { readdirSync, readFileSync, readlinkSync } from 'node:fs';
import { basename } from 'node:path';

/**
 * Whether a process other than a command's wrappers still holds its output open. A contained
 * command runs under bubblewrap or unshare and the namespace init (tools/sandbox.ts); those
 * live on while anything the command left behind runs, and hold the output although they never
 * write to it. So a background job whose output went to a file kept the output "open" all the
 * same, and the shell tool told the model to redirect what it had redirected. `wrapper` is the
 * process that was spawned (its `fd` is the command's end of the output, a socket node made);
 * this looks at every /proc/<pid>/fd this user may read for another holder of that end. Where
 * it cannot tell (no /proc, the wrapper gone), it answers yes: the reading before it.
 */
export function heldBeyondWrappers(wrapper: number, fd: 1 | 2): boolean {
  let end: string;
  let pids: string[];
  try {
    end = readlinkSync(`/proc/${wrapper}/fd/${fd}`);
    pids = readdirSync('/proc').filter((n) => /^\d+$/.test(n) && Number(n) !== wrapper);
  } catch {
    return true;
  }
  return pids.some((pid) => holds(pid, end) && !isWrapper(pid));
}

function holds(pid: string, end: string): boolean {
  let fds: string[];
  try {
    fds = readdirSync(`/proc/${pid}/fd`);
  } catch {
    return false; // Gone, or another user's.
  }
  return fds.some((fd) => {
    try {
      return readlinkSync(`/proc/${pid}/fd/${fd}`) === end;
    } catch {
      return false;
    }
  });
}

/** bubblewrap, unshare, or the namespace init (`sh -c INIT flotilla-init …`). */
function isWrapper(pid: string): boolean {
  try {
    const argv = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
    return ['bwrap', 'unshare'].includes(basename(argv[0] ?? '')) || argv[3] === 'flotilla-init';
  } catch {
    return false;
  }
}
