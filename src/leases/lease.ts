/**
 * A file lease (docs/design.md §16): one agent (or a person) says it is changing a path or the
 * paths a glob matches, in one checkout. Advisory: the fleet's own edit tools and the vendor
 * CLIs' pre-tool hooks honour it; a shell command does not (docs/security-fleet.md, "File leases").
 */
export interface Lease {
  /** The path or glob, relative to the checkout's top folder, `/`-separated. A folder covers what is inside it. */
  path: string;
  /** An agent id, or `human`. */
  holder: string;
  why: string;
  taken_at: string;
  /** When it lapses on its own; null: when its holder's task ends (an agent) or it is released. */
  expires_at: string | null;
  /** The holder's task when taken (null for a person): a lease without expiry ends with that task. */
  task: number | null;
}

/** Someone queued for paths held by others (`lease take --wait`, `lease_paths` with wait). */
export interface Waiter {
  holder: string;
  paths: string[];
  why: string;
  since: string;
  /** Until when the lease it gets is kept (ms from the grant); null: until the task ends. */
  ttl_ms: number | null;
  task: number | null;
  /** The waiting process (pid and start time, as crash detection checks them): a waiter that died leaves the queue. */
  pid: number;
  pid_start: string | null;
}

/** One checkout's leases and queue: `state/leases/<key>.json`, replaced atomically under its lock. */
export interface LeaseFile {
  v: 1;
  /** The checkout's top folder (a git worktree's root), absolute. */
  checkout: string;
  leases: Lease[];
  waiting: Waiter[];
}

export function emptyLeaseFile(checkout: string): LeaseFile {
  return { v: 1, checkout, leases: [], waiting: [] };
}

const isStr = (v: unknown): v is string => typeof v === 'string';

/**
 * The file's content, or null for one that is not a lease file (a torn write cannot happen: it is renamed into place).
 */
export function parseLeaseFile(text: string): LeaseFile | null {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch {
    return null;
  }
  if (typeof raw !== 'object' || raw === null) return null;
  const f = raw as Record<string, unknown>;
  if (f.v !== 1 || !isStr(f.checkout) || !Array.isArray(f.leases) || !Array.isArray(f.waiting)) return null;
  const leases = (f.leases as Record<string, unknown>[]).filter(
    (l) => isStr(l.path) && isStr(l.holder) && isStr(l.taken_at),
  ) as unknown as Lease[];
  const waiting = (f.waiting as Record<string, unknown>[]).filter(
    (w) => isStr(w.holder) && Array.isArray(w.paths) && typeof w.pid === 'number',
  ) as unknown as Waiter[];
  return { v: 1, checkout: f.checkout, leases, waiting };
}
