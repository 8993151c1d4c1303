import picomatch from 'picomatch';
import type { Lease, LeaseFile } from './lease.js';
import { isGlob, pathsOverlap } from './match.js';

/**
 * The lease decisions both stores make (docs/design.md §16): this host's lease files
 * (leases.ts) and the fleet's LEASES bucket (team-store/leases-kv.ts). Pure: they change the
 * lease file handed in and touch nothing else; the stores read, write and audit.
 */

/** What a take asks for one path. */
export interface LeaseAsked {
  path: string;
  holder: string;
  why: string;
  ttlMs: number | null;
  task: number | null;
}

/** Another holder's lease overlapping `rel`, if any: a take of `rel` by `holder` is refused on it. */
export function conflictIn(file: LeaseFile, rel: string, holder: string): Lease | undefined {
  return file.leases.find((l) => l.holder !== holder && pathsOverlap(l.path, rel));
}

/** The holder's lease on `path` put into `file`: a new one, or its own renewed (held since its first take). */
export function placeLease(file: LeaseFile, l: LeaseAsked, now: number): { lease: Lease; fresh: boolean } {
  const lease: Lease = {
    path: l.path,
    holder: l.holder,
    why: l.why,
    taken_at: new Date(now).toISOString(),
    expires_at: l.ttlMs === null ? null : new Date(now + l.ttlMs).toISOString(),
    task: l.task,
  };
  const own = file.leases.findIndex((x) => x.holder === l.holder && x.path === l.path);
  if (own >= 0) {
    lease.taken_at = file.leases[own]!.taken_at;
    file.leases[own] = lease;
  } else {
    file.leases.push(lease);
  }
  return { lease, fresh: own < 0 };
}

/** The audit line of a lease taken. */
export function takenEvent(file: LeaseFile, lease: Lease, via: string) {
  return {
    event: 'lease_taken',
    agent: lease.holder,
    path: lease.path,
    checkout: file.checkout,
    why: lease.why,
    via,
    ...(lease.expires_at ? { expires_at: lease.expires_at } : {}),
  } as const;
}

/** A lease path that holds every file `rel` names (itself, a folder above it, or a glob matching it). */
export function covers(leasePath: string, rel: string): boolean {
  if (isGlob(leasePath)) return picomatch(leasePath, { dot: true })(rel);
  return leasePath === '' || leasePath === rel || rel.startsWith(leasePath + '/');
}
