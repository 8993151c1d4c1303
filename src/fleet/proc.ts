import { readFileSync, readlinkSync } from 'node:fs';
import { isErrno } from '../errors.js';

/**
 * Process facts the fleet needs (§3 liveness, §5.1 lineage): start times (so a reused pid
 * is never mistaken for the process we registered), liveness and parent pids. Linux reads
 * `/proc/<pid>/stat` (no child process); macOS asks `ps`.
 */

const LINUX = process.platform === 'linux';

interface Stat {
  state: string;
  ppid: number;
  /** Field 5: the process group. */
  pgrp: number;
  /** Field 22: start time in clock ticks since boot; stable for the life of the process. */
  startTime: string;
}

/**
 * Parses a `/proc/<pid>/stat` line. The comm (field 2) is in parentheses and may itself
 * hold spaces or ')', so the fixed fields are read after the *last* ')'.
 */
export function parseProcStat(text: string): Stat | null {
  const close = text.lastIndexOf(')');
  if (close < 0) return null;
  // After ") " come fields 3, 4, … so field n is rest[n - 3].
  const rest = text.slice(close + 2).trim().split(' ');
  const state = rest[0];
  const ppid = Number(rest[1]);
  const pgrp = Number(rest[2]);
  const startTime = rest[19];
  if (!state || !Number.isInteger(ppid) || !Number.isInteger(pgrp) || !startTime) return null;
  return { state, ppid, pgrp, startTime };
}

function readStat(pid: number): Stat | null {
  try {
    return parseProcStat(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return null;
  }
}

function ps(pid: number, field: string): string | null {
  const r = psSync(['-o', `${field}=`, '-p', String(pid)]);
  if (r.status !== 0) return null;
  const out = r.stdout.trim();
  return out === '' ? null : out;
}

function validPid(pid: number): boolean {
  return Number.isInteger(pid) && pid > 0;
}

let hostPid: number | undefined;

/**
 * This process's pid as the fleet sees it. A tool command runs in its own pid namespace
 * (docs/security.md), where `process.pid` is a small namespace-local number; `/proc/self` is
 * resolved by the host's /proc and names the pid that registry records and ancestry walks use.
 */
export function selfPid(): number {
  if (hostPid !== undefined) return hostPid;
  let pid = process.pid;
  if (LINUX) {
    try {
      const n = Number(readlinkSync('/proc/self'));
      if (Number.isInteger(n) && n > 0) pid = n;
    } catch {
      // No /proc: the namespace-local pid is all there is.
    }
  }
  return (hostPid = pid);
}

/** The process's start time as an opaque string (Linux: clock ticks since boot; macOS: `ps lstart`), or null if it does not exist. */
export function processStartTime(pid: number): string | null {
  if (!validPid(pid)) return null;
  if (LINUX) return readStat(pid)?.startTime ?? null;
  return ps(pid, 'lstart');
}

/**
 * True when the process exists, is not a zombie, and (when `startTime` is given) started
 * at that time — so a pid the kernel has reused for another process reads as dead.
 */
export function isProcessAlive(pid: number, startTime?: string | null): boolean {
  if (!validPid(pid)) return false;
  // Linux asks /proc, not kill(pid, 0): inside a tool command's pid namespace kill() cannot
  // address host pids, while /proc is still the host's and answers for every process.
  if (LINUX) {
    const stat = readStat(pid);
    if (!stat || stat.state === 'Z' || stat.state === 'X') return false;
    return startTime == null || stat.startTime === startTime;
  }
  try {
    process.kill(pid, 0);
  } catch (err) {
    // EPERM: it exists but belongs to someone else.
    if (!isErrno(err, 'EPERM')) return false;
  }
  const state = ps(pid, 'stat');
  if (state === null || state.startsWith('Z')) return false;
  return startTime == null || ps(pid, 'lstart') === startTime;
}

/** The parent pid, or null if the process does not exist. */
export function parentPid(pid: number): number | null {
  if (!validPid(pid)) return null;
  if (LINUX) return readStat(pid)?.ppid ?? null;
  const out = ps(pid, 'ppid');
  const n = Number(out);
  return out !== null && Number.isInteger(n) ? n : null;
}

/** The process group the process is in, or null if it does not exist. */
export function processGroup(pid: number): number | null {
  if (!validPid(pid)) return null;
  if (LINUX) return readStat(pid)?.pgrp ?? null;
  const out = ps(pid, 'pgid');
  const n = Number(out);
  return out !== null && Number.isInteger(n) ? n : null;
}

/** Every process's parent in one `ps` call (macOS), so a walk costs one child process, not one per level. */
function psParentTable(): Map<number, number> {
  const table = new Map<number, number>();
  const r = psSync(['-A', '-o', 'pid=,ppid=']);
  if (r.status !== 0) return table;
  for (const line of r.stdout.split('\n')) {
    const [a, b] = line.trim().split(/\s+/);
    if (a && b) table.set(Number(a), Number(b));
  }
  return table;
}

/** The parent, grandparent, … of `pid`, nearest first, ending before pid 0. */
export function ancestors(pid: number): number[] {
  const out: number[] = [];
  const seen = new Set<number>([pid]);
  const table = LINUX ? null : psParentTable();
  let cur = pid;
  // A bounded walk: pid trees are shallow, and a cycle would mean a torn read.
  for (let i = 0; i < 1024; i++) {
    const up = table ? table.get(cur) ?? null : parentPid(cur);
    if (up === null || up <= 0 || seen.has(up)) break;
    out.push(up);
    seen.add(up);
    cur = up;
  }
  return out;
}

/**
 * `ps`, for systems without /proc. child_process is loaded only here: it costs ~10 ms, and
 * `flotilla send` reaches this module on every call (§14).
 */
function psSync(args: string[]): { status: number | null; stdout: string } {
  return process.getBuiltinModule('node:child_process').spawnSync('ps', args, { encoding: 'utf8' });
}
