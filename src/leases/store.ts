import { readFileSync, readdirSync } from 'node:fs';
import { isErrno, FlotillaError } from '../errors.js';
import { withFileLock } from '../fleet/file-lock.js';
import { writeFileAtomic } from '../layout/atomic.js';
import type { Layout } from '../layout/layout.js';
import { checkoutKey } from './checkout.js';
import { emptyLeaseFile, parseLeaseFile, type LeaseFile } from './lease.js';

/**
 * The lease files on disk (docs/architecture.md, "Files"): one per repository, replaced
 * atomically (temp, fsync, rename), so a reader needs no lock. A writer holds the checkout's
 * lock for one change — a lock file like the task board's, stepped over as soon as a killed
 * holder's process is gone (docs/decisions-hosts.md, "Locks are files in the fleet root").
 */

const TIMEOUT_MS = 60_000;

export function readLeaseFile(layout: Layout, checkout: string): LeaseFile {
  let text: string;
  try {
    text = readFileSync(layout.leaseFile(checkoutKey(checkout)), 'utf8');
  } catch (err) {
    if (isErrno(err, 'ENOENT')) return emptyLeaseFile(checkout);
    throw err;
  }
  // A damaged file holds no lease anyone could honour: it reads as empty and the next writer replaces it.
  return parseLeaseFile(text) ?? emptyLeaseFile(checkout);
}

export function writeLeaseFile(layout: Layout, file: LeaseFile): void {
  writeFileAtomic(layout.leaseFile(checkoutKey(file.checkout)), JSON.stringify(file, null, 1) + '\n');
}

/** Every checkout's lease file (for `lease list`, status and the dashboard). */
export function allLeaseFiles(layout: Layout): LeaseFile[] {
  let names: string[];
  try {
    names = readdirSync(layout.leasesDir);
  } catch (err) {
    if (isErrno(err, 'ENOENT')) return [];
    throw err;
  }
  const out: LeaseFile[] = [];
  for (const n of names) {
    if (!n.endsWith('.json') || n.startsWith('.')) continue;
    try {
      const f = parseLeaseFile(readFileSync(`${layout.leasesDir}/${n}`, 'utf8'));
      if (f) out.push(f);
    } catch {
      // Removed between the listing and the read.
    }
  }
  return out;
}

/** Runs `fn` holding the checkout's lock (re-read inside: what was read before may be stale). */
export function withLeaseLock<T>(layout: Layout, checkout: string, fn: () => T | Promise<T>): Promise<T> {
  return withFileLock(
    layout.leaseLock(checkoutKey(checkout)),
    {
      timeoutMs: TIMEOUT_MS,
      busy: () =>
        new FlotillaError(
          `the leases of ${checkout} stayed locked for ${TIMEOUT_MS / 1000} s by another process — try again; if it persists, see 'flotilla status' for a stuck agent`,
          { code: 'lease-busy' },
        ),
    },
    fn,
  );
}
