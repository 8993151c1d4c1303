import picomatch from 'picomatch';
import { refusal } from '../errors.js';
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

/**
 * The leases on `rel` that `by` gives back — its own, or any for a person — taken out of
 * `file`; the refusal when nobody holds `rel`, or only another holder does.
 */
export function releaseIn(file: LeaseFile, rel: string, by: string): Lease[] {
  const found = file.leases.filter((l) => l.path === rel);
  if (found.length === 0)
    throw refusal(
      'lease-not-held',
      `refused: nobody holds a lease on ${rel} in ${file.checkout} — 'flotilla lease list' shows the leases`,
      { path: rel },
    );
  const theirs = found.filter((l) => l.holder === by || by === 'human');
  if (theirs.length === 0)
    throw refusal(
      'lease-not-yours',
      `refused: the lease on ${rel} is ${found[0]!.holder}'s — only its holder or a person may release it`,
      { path: rel, holder: found[0]!.holder },
    );
  file.leases = file.leases.filter((l) => !theirs.includes(l));
  return theirs;
}

/** The audit line of a lease given back by `by`. */
export function releasedEvent(file: LeaseFile, lease: Lease, by: string, reason: string) {
  return {
    event: 'lease_released',
    agent: lease.holder,
    path: lease.path,
    checkout: file.checkout,
    by,
    reason,
  } as const;
}
