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
  const rest = text
    .slice(close + 2)
    .trim()
    .split(' ');
  const state = rest[0];
  const ppid = Number(rest[1]);
  const pgrp = Number(rest[2]);
  const startTime = rest[19];
  if (!state || !Number.isInteger(ppid) || !Number.isInteger(pgrp) || !startTime) return null;
  return { state, ppid, pgrp, startTime };
}

/**
 * The process's stat; 'gone' when /proc has no entry for it, 'unknown' when it could not be read (no proof either way).
 */
function readStat(pid: number): Stat | 'gone' | 'unknown' {
  let text: string;
  try {
    text = readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch (err) {
    // ESRCH: the process ended between the open and the read.
    return isErrno(err, 'ENOENT') || isErrno(err, 'ESRCH') ? 'gone' : 'unknown';
  }
  return parseProcStat(text) ?? 'unknown';
}

function statOf(pid: number): Stat | null {
  const s = readStat(pid);
  return typeof s === 'string' ? null : s;
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
 * Never name this process by `process.pid` in anything another process reads: use `selfProcess`.
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

let self: { pid: number; start: string | null } | undefined;

/**
 * This process as every record, claim, lease waiter, lock and ticket names it: its host pid
 * and that pid's start time, so `isProcessAlive` in any other process on the host judges it.
 * `process.pid` inside a pid namespace is a namespace-local number that names some other
 * process (or none) on the host: a lock named so was broken while held, or never.
 */
export function selfProcess(): { pid: number; start: string | null } {
  if (self) return self;
  const pid = selfPid();
  return (self = { pid, start: processStartTime(pid) });
}

/** The pid namespace the agent's harness runs in, handed down to the commands it runs. */
export const PID_NAMESPACE_ENV = 'FLOTILLA_PIDNS';
/** The host's own pid namespace (the kernel's PROC_PID_INIT_INO): its /proc sees every process. */
const INITIAL_PID_NAMESPACE = 'pid:[4026531836]';

/** This process's pid namespace (`pid:[inode]`), or null where there is none to read. */
export function pidNamespaceId(): string | null {
  if (!LINUX) return null;
  try {
    return readlinkSync('/proc/self/ns/pid');
  } catch {
    return null;
  }
}

let procView: boolean | undefined;

/**
 * Whether this process's /proc shows the fleet's processes, so a missing entry proves a death.
 * Under bubblewrap a command has a /proc of its own pid namespace (docs/security.md): there
 * every harness reads as missing, and nothing may be judged dead from it. /proc is the
 * fleet's when it belongs to an outer namespace (NSpid lists more than one pid), is the
 * host's own, or is the namespace the agent's harness runs in (`FLOTILLA_PIDNS`).
 */
export function procShowsFleet(): boolean {
  if (procView !== undefined) return procView;
  if (!LINUX) return (procView = true);
  try {
    const nspid = /^NSpid:\s*(.*)$/m.exec(readFileSync('/proc/self/status', 'utf8'))?.[1]?.trim().split(/\s+/) ?? [];
    if (nspid.length > 1) return (procView = true);
    const own = pidNamespaceId();
    const fleet = process.env[PID_NAMESPACE_ENV];
    return (procView = own === null || own === INITIAL_PID_NAMESPACE || !fleet || own === fleet);
  } catch {
    return (procView = true);
  }
}

/**
 * The process's start time as an opaque string (Linux: clock ticks since boot; macOS: `ps lstart`), or null if it does
 * not exist.
 */
export function processStartTime(pid: number): string | null {
  if (!validPid(pid)) return null;
  if (LINUX) return statOf(pid)?.startTime ?? null;
  return ps(pid, 'lstart');
}

/**
 * The one judge of whether a process the fleet recorded still runs (records, claims, leases,
 * waiters, locks, tickets): false only on proof of its end — no /proc entry, a zombie, or
 * another start time (a pid the kernel gave to another process). A read that fails otherwise,
 * or a /proc that cannot see the fleet's processes, proves nothing: the process counts as alive.
 */
export function isProcessAlive(pid: number, startTime?: string | null): boolean {
  if (!validPid(pid)) return false;
  // Linux asks /proc, not kill(pid, 0): inside a tool command's pid namespace kill() cannot
  // address host pids, while /proc (outside bubblewrap) is still the host's and answers for every process.
  if (LINUX) {
    const stat = readStat(pid);
    if (stat === 'unknown') return true;
    if (stat === 'gone') return !procShowsFleet();
    if (stat.state === 'Z' || stat.state === 'X') return false;
    return startTime == null || stat.startTime === startTime || !procShowsFleet();
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
  if (LINUX) return statOf(pid)?.ppid ?? null;
  const out = ps(pid, 'ppid');
  const n = Number(out);
  return out !== null && Number.isInteger(n) ? n : null;
}

/** The process group the process is in, or null if it does not exist. */
export function processGroup(pid: number): number | null {
  if (!validPid(pid)) return null;
  if (LINUX) return statOf(pid)?.pgrp ?? null;
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
    const up = table ? (table.get(cur) ?? null) : parentPid(cur);
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
