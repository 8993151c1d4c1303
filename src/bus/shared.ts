import { atExit } from '../at-exit.js';
import type { Layout } from '../layout/layout.js';
import { sleep } from '../sleep.js';
import { fleetConfig } from './settings.js';

/**
 * A fleet-wide key-value store with compare-and-set (§18): what the whole fleet shares beyond
 * mail and records — the task boards and the file leases on a `nats://` bus
 * (docs/decisions-hosts.md "One board and one set of leases on the bus"). Every write names the
 * revision it read (or none, for a key that must not exist yet), so of two writers that read
 * the same revision exactly one succeeds; the other reads again. On `maildir` there is none:
 * the boards and leases are files in the fleet root, behind their locks.
 */
export interface SharedKv {
  /** The key's value and revision, or null when it has none. Throws when the bus cannot answer. */
  get(key: string): Promise<SharedEntry | null>;
  /** Puts a key that has no value yet; null when it has one. */
  create(key: string, value: string): Promise<number | null>;
  /** Puts a key whose revision is still `revision`; null when another writer put it since. */
  update(key: string, value: string, revision: number): Promise<number | null>;
  /** Each live key's last value under `pattern` (`board.>`, NATS subject wildcards). */
  values(pattern: string): Promise<{ key: string; value: string }[]>;
  /** The live keys under `pattern`, names only: one request however many values they hold. */
  keys(pattern: string): Promise<string[]>;
  /** Removes a key and every trace of it (no tombstone left to list), whatever its revision. */
  drop(key: string): Promise<void>;
  /** Whether it holds nothing at all (nobody has written it yet, or all went): one request, no keys or values. */
  empty(): Promise<boolean>;
}

export interface SharedEntry {
  value: string;
  revision: number;
}

/** The first retry's bound on its wait, doubled each retry up to CAS_BACKOFF_CAP_MS. */
const CAS_BACKOFF_BASE_MS = 2;
const CAS_BACKOFF_CAP_MS = 100;

/**
 * Waits before retry `attempt` (1, 2, …; 0 waits not at all) of a compare-and-set that lost the
 * race for its key: a random time below a bound that doubles each retry up to 100 ms ("full
 * jitter"). Without it twenty writers on one key read again all at once, and a writer on a
 * slower host keeps losing to the quick ones until its tries run out.
 */
export function casBackoff(attempt: number): Promise<void> {
  if (attempt <= 0) return Promise.resolve();
  return sleep(Math.random() * Math.min(CAS_BACKOFF_CAP_MS, CAS_BACKOFF_BASE_MS * 2 ** (attempt - 1)));
}

/** The shared stores of a fleet: one for the task boards, one for the leases. */
export type SharedStore = 'board' | 'leases';

const opened = new Map<string, Promise<{ kv: SharedKv; close(): Promise<void> }>>();

/**
 * The fleet's shared store `which` when `fleet.bus` is `nats://`, else null (a `maildir` fleet
 * keeps its boards and leases as files). One connection per fleet root and store in a process,
 * let go of when the command is done (src/at-exit.ts).
 */
export async function sharedKvFor(layout: Layout, which: SharedStore): Promise<SharedKv | null> {
  const config = await fleetConfig(layout);
  if (config.fleet.bus === 'maildir') return null;
  const key = `${layout.root}\0${config.fleet.bus}\0${which}`;
  let entry = opened.get(key);
  if (!entry) {
    entry = import('./nats/shared.js').then((m) => m.natsShared(layout, config.fleet, which));
    opened.set(key, entry);
    // A failed connect is forgotten, so the next use connects afresh.
    entry.catch(() => opened.delete(key));
  }
  return (await entry).kv;
}

/** Lets go of every shared store this process opened (a CLI's at exit; a harness's as its bus closes). */
export async function closeShared(): Promise<void> {
  const all = [...opened.values()];
  opened.clear();
  await Promise.all(
    all.map((p) =>
      p.then(
        (s) => s.close(),
        () => undefined,
      ),
    ),
  );
}

atExit(closeShared);
