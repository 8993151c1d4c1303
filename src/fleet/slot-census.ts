import { readdirSync, readFileSync, readlinkSync } from 'node:fs';
import { join, sep } from 'node:path';
import { PACKAGE_ROOT } from '../layout/package.js';
import { ancestors } from './proc.js';

/**
 * Who holds a slot name (docs/security-fleet.md "Slots belong to harnesses"). A slot's names are
 * abstract unix sockets; any process in the fleet's network namespace can bind one — an
 * agent's command with no sandbox, or with `security.sandbox_network: true`. Such a holder
 * must not count against `limits.max_running`, or one squatting command refuses the
 * person's spawns ("8 agents are working").
 *
 * Linux tells who listens on a name: `/proc/net/unix` gives the socket's inode, and the
 * process holding that inode has a `socket:[inode]` link under `/proc/<pid>/fd`. A holder
 * counts when it is in this host's mount namespace (a bubblewrap sandbox has its own, so
 * nothing sandboxed ever counts) and is either a registered harness, a process no agent
 * started (the person's spawn, a harness not yet registered, its tmux), or — started by an
 * agent — Flotilla's own code from this installation (`spawn-agent` run by a command, mid-
 * handoff). Anything else is an impostor: the spawner steps over it and `status` and
 * `doctor` name it.
 *
 * Without a sandbox a command runs as the person's user and could still pose as Flotilla
 * (run its code with a changed title); docs/security.md says what `none` cannot prevent.
 */

export type HolderKind = 'flotilla' | 'impostor';

export interface SlotHolder {
  /** The name without its leading NUL. */
  name: string;
  index: number;
  side: 'a' | 'b';
  pid: number | null;
  kind: HolderKind;
  /** The holder's command line, shortened, for status and doctor. */
  command: string;
}

const LINUX = process.platform === 'linux';
/** `__SO_ACCEPTCON` in /proc/net/unix's Flags: the socket listens. */
const ACCEPTCON = 0x10000;
/** Node options that run code other than the script named after them. */
const CODE_OPTIONS = new Set([
  '-r',
  '--require',
  '--import',
  '--loader',
  '--experimental-loader',
  '-e',
  '--eval',
  '-p',
  '--print',
  '-i',
  '--interactive',
]);

/** Listening abstract names starting with `prefix` (no NUL), each with its socket inodes. */
export function listeningNames(prefix: string): Map<string, number[]> {
  const out = new Map<string, number[]>();
  let text: string;
  try {
    text = readFileSync('/proc/net/unix', 'utf8');
  } catch {
    return out;
  }
  for (const line of text.split('\n')) {
    const at = line.indexOf(' @');
    if (at < 0) continue;
    // Node binds abstract names padded with NULs to the whole address, shown as '@'.
    const name = line
      .slice(at + 2)
      .trim()
      .replace(/@+$/, '');
    if (!name.startsWith(prefix)) continue;
    const fields = line.slice(0, at).trim().split(/\s+/);
    // Num RefCount Protocol Flags Type St Inode
    const flags = parseInt(fields[3] ?? '', 16);
    const inode = Number(fields[6]);
    if (!(flags & ACCEPTCON) || !Number.isInteger(inode)) continue;
    out.set(name, [...(out.get(name) ?? []), inode]);
  }
  return out;
}

function socketInodes(pid: number): number[] {
  const out: number[] = [];
  let fds: string[];
  try {
    fds = readdirSync(`/proc/${pid}/fd`);
  } catch {
    return out;
  }
  for (const fd of fds) {
    try {
      const m = /^socket:\[(\d+)\]$/.exec(readlinkSync(`/proc/${pid}/fd/${fd}`));
      if (m) out.push(Number(m[1]));
    } catch {
      // Closed meanwhile.
    }
  }
  return out;
}

/** Which process holds each inode: the likely pids first, then every process this user may look at. */
function holdersOf(inodes: Set<number>, likely: readonly number[]): Map<number, number> {
  const found = new Map<number, number>();
  const look = (pid: number): void => {
    for (const inode of socketInodes(pid)) if (inodes.has(inode) && !found.has(inode)) found.set(inode, pid);
  };
  for (const pid of likely) look(pid);
  if (found.size === inodes.size) return found;
  let pids: string[];
  try {
    pids = readdirSync('/proc').filter((n) => /^\d+$/.test(n));
  } catch {
    return found;
  }
  for (const p of pids) {
    look(Number(p));
    if (found.size === inodes.size) break;
  }
  return found;
}

function commandLine(pid: number): string[] {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').filter(Boolean);
  } catch {
    return [];
  }
}

let ownMountNs: string | null | undefined;
function mountNs(pid: number | 'self'): string | null {
  try {
    return readlinkSync(`/proc/${pid}/ns/mnt`);
  } catch {
    return null;
  }
}

/**
 * Flotilla's own code from this installation: the script Node runs is under its dist/, with no option that runs other
 * code first.
 */
function runsFlotilla(pid: number): boolean {
  const dist = join(PACKAGE_ROOT, 'dist') + sep;
  for (const arg of commandLine(pid).slice(1)) {
    if (CODE_OPTIONS.has(arg.split('=')[0]!)) return false;
    if (arg.startsWith('-')) continue;
    return arg.startsWith(dist);
  }
  return false;
}

/** Whether a holder counts (see the module comment). `agents`: the pids of live registered harnesses. */
export function holderCounts(pid: number, agents: ReadonlySet<number>): boolean {
  if (ownMountNs === undefined) ownMountNs = mountNs('self');
  const ns = mountNs(pid);
  if (!ns || ns !== ownMountNs) return false;
  if (agents.has(pid)) return true;
  if (!ancestors(pid).some((p) => agents.has(p))) return true;
  return runsFlotilla(pid);
}

function parseName(name: string, prefix: string): { index: number; side: 'a' | 'b' } | null {
  const m = /^(\d+)-([ab])$/.exec(name.slice(prefix.length));
  return m ? { index: Number(m[1]), side: m[2] as 'a' | 'b' } : null;
}

/**
 * One look at who holds this fleet's slot names, taken when first asked and kept for the
 * caller's one reservation: a name bound after it is not in it, and counts as held.
 */
export class SlotCensus {
  private holders: Map<string, SlotHolder> | undefined;

  constructor(
    private readonly prefix: string,
    private readonly harnessPids: () => ReadonlySet<number> = () => new Set(),
  ) {}

  /** Whether the name (without NUL) is held by something that is not Flotilla. */
  isImpostor(name: string): boolean {
    if (!LINUX) return false;
    return this.all().get(name)?.kind === 'impostor';
  }

  all(): Map<string, SlotHolder> {
    if (this.holders) return this.holders;
    const names = listeningNames(this.prefix);
    const inodes = new Set([...names.values()].flat());
    const agents = inodes.size ? this.harnessPids() : new Set<number>();
    const pids = inodes.size ? holdersOf(inodes, [...agents]) : new Map<number, number>();
    // A name whose holder was not found may have been let go during the look (a harness going
    // idle): only one still listening after it is another user's. Taken for an impostor, a
    // slot given back and taken again at once was stepped over: one agent more than the cap.
    const still = [...names.values()].flat().some((n) => !pids.has(n)) ? listeningNames(this.prefix) : names;
    const out = new Map<string, SlotHolder>();
    for (const [name, nodes] of names) {
      const where = parseName(name, this.prefix);
      if (!where) continue;
      const pid = nodes.map((n) => pids.get(n)).find((p) => p !== undefined) ?? null;
      // Gone, or listening on a new socket since the first read: not known, so counted as held.
      if (pid === null && !nodes.some((n) => still.get(name)?.includes(n))) continue;
      // A holder this user cannot see is another user's (abstract names are open to every uid).
      const kind: HolderKind = pid !== null && holderCounts(pid, agents) ? 'flotilla' : 'impostor';
      out.set(name, {
        name,
        ...where,
        pid,
        kind,
        command: pid === null ? '(another user)' : commandLine(pid).join(' ').slice(0, 120),
      });
    }
    return (this.holders = out);
  }
}
