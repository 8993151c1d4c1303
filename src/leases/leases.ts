import picomatch from 'picomatch';
import { audit } from '../audit/audit.js';
import { UsageError } from '../errors.js';
import type { Layout } from '../layout/layout.js';
import { checkoutPath, type CheckoutPath } from './checkout.js';
import { conflictIn, covers, placeLease, releasedEvent, releaseIn, takenEvent, type LeaseAsked } from './decide.js';
import { leaseLapsed, waiterGone } from './lapse.js';
import type { Lease, LeaseFile, Waiter } from './lease.js';
import { isGlob, pathsOverlap } from './match.js';
import { allLeaseFiles, readLeaseFile, withLeaseLock, writeLeaseFile } from './store.js';

/**
 * The lease operations (docs/design.md §16), the same for every door: our write and edit
 * tools, the vendor CLIs' pre-tool hooks, `flotilla lease`, the `lease_paths` tool. Each
 * change takes the lock of every checkout it touches (in key order, so two takers never
 * wait on each other), re-reads, sweeps what has lapsed, decides, writes and lets go.
 * `holder` is the caller's identity as `send` finds it, never given by a model.
 */

export interface TakeSpec {
  /** Absolute paths or globs. */
  targets: string[];
  holder: string;
  why: string;
  /** Kept this long past the take, whatever happens to the task; null: until the holder's task ends. */
  ttlMs: number | null;
  /** The holder's task now (null for a person). */
  task: number | null;
}

export interface Conflict {
  checkout: string;
  /** The requested path (relative) that met the lease. */
  path: string;
  lease: Lease;
}

export type TakeOutcome =
  { ok: true; taken: { checkout: string; lease: Lease }[] } | { ok: false; conflict: Conflict; queued: boolean };

/** An absolute path or glob → its checkout and relative form. */
export function resolveTarget(abs: string): CheckoutPath {
  return isGlob(abs) ? checkoutPath(abs, picomatch.scan(abs).base) : checkoutPath(abs);
}

function byCheckout(targets: string[]): Map<string, string[]> {
  const out = new Map<string, string[]>();
  for (const t of targets) {
    const { checkout, rel } = resolveTarget(t);
    out.set(checkout, [...(out.get(checkout) ?? []), rel]);
  }
  return out;
}

async function underLocks<T>(layout: Layout, checkouts: string[], fn: () => T | Promise<T>): Promise<T> {
  const [first, ...rest] = checkouts;
  if (first === undefined) return fn();
  return withLeaseLock(layout, first, () => underLocks(layout, rest, fn));
}

/**
 * Lock held: drops lapsed leases and dead waiters, then hands freed paths to the queue in order. True if it changed
 * anything.
 */
function sweep(layout: Layout, file: LeaseFile, now = Date.now()): boolean {
  let changed = false;
  file.leases = file.leases.filter((l) => {
    const lapsed = leaseLapsed(layout, l, now);
    if (!lapsed) return true;
    audit(layout, {
      event: lapsed.event,
      agent: l.holder,
      path: l.path,
      checkout: file.checkout,
      reason: lapsed.reason,
    });
    changed = true;
    return false;
  });
  const before = file.waiting.length;
  file.waiting = file.waiting.filter((w) => !waiterGone(w));
  if (file.waiting.length !== before) changed = true;
  return grant(layout, file, now) || changed;
}

/** Lock held: each waiter, oldest first, whose paths are all free now gets them. */
function grant(layout: Layout, file: LeaseFile, now: number): boolean {
  let changed = false;
  for (const w of [...file.waiting]) {
    if (w.paths.some((p) => conflictIn(file, p, w.holder))) continue;
    file.waiting = file.waiting.filter((x) => x !== w);
    for (const p of w.paths)
      put(layout, file, { path: p, holder: w.holder, why: w.why, ttlMs: w.ttl_ms, task: w.task }, now, 'queue');
    changed = true;
  }
  return changed;
}

/** Lock held: the holder's lease on `path` (a new one, or its own renewed), audited. */
function put(layout: Layout, file: LeaseFile, l: LeaseAsked, now: number, via: string): Lease {
  const { lease } = placeLease(file, l, now);
  audit(layout, takenEvent(file, lease, via));
  return lease;
}

/**
 * Takes leases on every target, all or none. A path another holder's lease overlaps is a
 * conflict (audited as a refusal); with `queue`, the caller is put in line for the paths
 * (one checkout only) and `wait.ts` watches for the grant.
 */
export async function takeLeases(
  layout: Layout,
  spec: TakeSpec,
  opts: { queue?: { pid: number; pidStart: string | null }; via?: string } = {},
): Promise<TakeOutcome> {
  if (spec.targets.length === 0)
    throw new UsageError('name at least one path or glob to lease, e.g. flotilla lease take src/parser.ts');
  const groups = byCheckout(spec.targets);
  if (opts.queue && groups.size > 1)
    throw new UsageError(
      "waiting works on the paths of one checkout at a time — wait for each checkout's paths separately",
    );
  const checkouts = [...groups.keys()].sort();
  return underLocks(layout, checkouts, () => {
    const now = Date.now();
    const files = checkouts.map((c) => readLeaseFile(layout, c));
    const dirty = new Set<LeaseFile>(files.filter((f) => sweep(layout, f, now)));
    for (const file of files) {
      for (const rel of groups.get(file.checkout)!) {
        const held = conflictIn(file, rel, spec.holder);
        if (!held) continue;
        audit(layout, {
          event: 'lease_refused',
          agent: spec.holder,
          path: rel,
          checkout: file.checkout,
          holder: held.holder,
          held_path: held.path,
          via: opts.via ?? 'lease',
        });
        let queued = false;
        if (opts.queue) {
          enqueue(file, {
            holder: spec.holder,
            paths: groups.get(file.checkout)!,
            why: spec.why,
            since: new Date(now).toISOString(),
            ttl_ms: spec.ttlMs,
            task: spec.task,
            pid: opts.queue.pid,
            pid_start: opts.queue.pidStart,
          });
          audit(layout, {
            event: 'lease_queued',
            agent: spec.holder,
            path: rel,
            checkout: file.checkout,
            holder: held.holder,
          });
          dirty.add(file);
          queued = true;
        }
        for (const f of dirty) writeLeaseFile(layout, f);
        return { ok: false, conflict: { checkout: file.checkout, path: rel, lease: held }, queued };
      }
    }
    const taken: { checkout: string; lease: Lease }[] = [];
    for (const file of files) {
      for (const rel of groups.get(file.checkout)!)
        taken.push({
          checkout: file.checkout,
          lease: put(layout, file, { path: rel, ...spec }, now, opts.via ?? 'lease'),
        });
      writeLeaseFile(layout, file);
    }
    return { ok: true, taken };
  });
}

function enqueue(file: LeaseFile, w: Waiter): void {
  // One place in line per waiting process: a retry keeps its turn.
  if (file.waiting.some((x) => x.pid === w.pid && x.holder === w.holder)) return;
  file.waiting.push(w);
}

/**
 * The lease an edit needs, taken if not already held (docs/design.md §16): the fast path is
 * one read of the checkout's file with no lock, when the holder's own lease covers the file.
 */
export async function leaseForEdit(
  layout: Layout,
  file: string,
  holder: string,
  task: number | null,
  via: string,
): Promise<TakeOutcome> {
  const { checkout, rel } = checkoutPath(file);
  const current = readLeaseFile(layout, checkout);
  const now = Date.now();
  const mine = current.leases.find((l) => l.holder === holder && covers(l.path, rel));
  if (
    mine &&
    !current.leases.some((l) => l.holder !== holder && pathsOverlap(l.path, rel)) &&
    !leaseLapsed(layout, mine, now)
  ) {
    return { ok: true, taken: [{ checkout, lease: mine }] };
  }
  return takeLeases(layout, { targets: [file], holder, why: `${via} ${rel}`, ttlMs: null, task }, { via });
}

/**
 * Gives leases back. `targets` undefined: all of the caller's. Only the holder or a person may
 * release a lease; naming a path nobody holds is a refusal saying so.
 */
export async function releaseLeases(
  layout: Layout,
  by: string,
  targets: string[] | undefined,
  reason: string,
): Promise<{ checkout: string; lease: Lease }[]> {
  if (targets === undefined) return releaseAllOf(layout, by, reason);
  const groups = byCheckout(targets);
  const checkouts = [...groups.keys()].sort();
  return underLocks(layout, checkouts, () => {
    const now = Date.now();
    const files = checkouts.map((c) => readLeaseFile(layout, c));
    files.forEach((f) => sweep(layout, f, now));
    const out: { checkout: string; lease: Lease }[] = [];
    for (const file of files) {
      for (const rel of groups.get(file.checkout)!) {
        for (const l of releaseIn(file, rel, by)) {
          audit(layout, releasedEvent(file, l, by, reason));
          out.push({ checkout: file.checkout, lease: l });
        }
      }
      grant(layout, file, now);
      writeLeaseFile(layout, file);
    }
    return out;
  });
}

/**
 * Every lease and place in line of one holder goes, in every checkout: called when the holder ends, however it ends.
 */
export async function releaseAllOf(
  layout: Layout,
  holder: string,
  reason: string,
): Promise<{ checkout: string; lease: Lease }[]> {
  const out: { checkout: string; lease: Lease }[] = [];
  for (const seen of allLeaseFiles(layout)) {
    if (!seen.leases.some((l) => l.holder === holder) && !seen.waiting.some((w) => w.holder === holder)) continue;
    await withLeaseLock(layout, seen.checkout, () => {
      const file = readLeaseFile(layout, seen.checkout);
      const now = Date.now();
      const mine = file.leases.filter((l) => l.holder === holder);
      file.leases = file.leases.filter((l) => l.holder !== holder);
      file.waiting = file.waiting.filter((w) => w.holder !== holder);
      for (const l of mine) {
        audit(layout, releasedEvent(file, l, holder, reason));
        out.push({ checkout: file.checkout, lease: l });
      }
      sweep(layout, file, now);
      writeLeaseFile(layout, file);
    });
  }
  return out;
}

/** Sweeps every checkout where one of `holder`'s leases has lapsed (its task ended): called at each task's end. */
export async function sweepHolder(layout: Layout, holder: string): Promise<void> {
  for (const seen of allLeaseFiles(layout)) {
    if (!seen.leases.some((l) => l.holder === holder && leaseLapsed(layout, l))) continue;
    await sweepCheckout(layout, seen.checkout);
  }
}

/** Sweeps one checkout under its lock (a waiter that saw a lease lapse). */
export async function sweepCheckout(layout: Layout, checkout: string): Promise<void> {
  await withLeaseLock(layout, checkout, () => {
    const file = readLeaseFile(layout, checkout);
    if (sweep(layout, file)) writeLeaseFile(layout, file);
  });
}
