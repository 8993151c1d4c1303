import type { KV, KvEntry } from '@nats-io/kv';
import type { AgentRecord } from '../../fleet/record.js';
import type { Link } from './link.js';
import { sleep } from '../../sleep.js';
import { isWrongRevision } from './lost.js';
import { removeAt } from './remove-at.js';

/**
 * Ended records in the RECORDS bucket (docs/decisions-hosts.md "Records on the bus", the ended
 * keys): a live record's key is its id; once it ends on its own host it moves to
 * `ended.<id>`, and the host's `recent.<host>` key lists the ones that ended last. Agent ids
 * and host names have no dot, so the bucket's one-token keys are exactly the live records
 * (and the lost ones, which stay where the fleet marked them): `status`, the dashboard and
 * the lost-marking read those and the short lists, never the whole history.
 */

/** The key of an ended record. */
export const endedKey = (id: string): string => `ended.${id}`;
/** The key listing a host's ended records, newest first. */
export const recentKey = (host: string): string => `recent.${host}`;

/**
 * How many ended records a host's list names: status's window (fleet/live.ts RECENT_WINDOW) and room for the lost ones
 * beside it.
 */
export const RECENT_KEPT = 100;

/**
 * The records a host's list carries beside their names, newest first, up to this many bytes of JSON: `status` on
 * another host reads its window in one get instead of one per record. Past it (records with long tasks), the older
 * ones are named only, and a reader gets those by their ended keys.
 */
export const RECENT_RECORD_BYTES = 256 * 1024;

/** One ended record in a host's list: its id, when it ended, and (within RECENT_RECORD_BYTES) its ended key's value. */
export interface RecentItem {
  id: string;
  at: string;
  /** The record as its ended key holds it, parsed; absent past the byte budget (or from an older writer). */
  record?: unknown;
}

/** A host's list of its ended records (`recent.<host>`). */
export interface Recent {
  /** How many of its records have ended under `ended.` (each counted once). */
  ended: number;
  /** The last RECENT_KEPT to end, newest first. */
  last: RecentItem[];
}

const decoder = new TextDecoder();

export function parseRecent(value: Uint8Array): Recent | null {
  try {
    const r = JSON.parse(decoder.decode(value)) as Partial<Recent>;
    return typeof r.ended === 'number' && Array.isArray(r.last) ? { ended: r.ended, last: r.last } : null;
  } catch {
    return null;
  }
}

/**
 * Moves `rec`, ended on this host, out of the live keys: its copy put at `ended.<id>`
 * (revision-checked against that key, the file read by the caller after the live key's
 * revision), named in `recent.<host>`, then its live key deleted with a check against the
 * revision `live` had — so a lost mark put meanwhile stays, and the caller reads again (a
 * wrong revision throws) — and the delete's marker purged (it alone: a lost mark put after
 * it stays), so the live keys do not grow with the history. Each step may be repeated: a process killed halfway leaves
 * it owed,
 * and the next publish of the record completes it.
 */
export async function moveEnded(
  link: Pick<Link, 'js' | 'jsm'>,
  kv: KV,
  bucket: string,
  live: KvEntry | null,
  rec: AgentRecord,
  data: string,
  self: string,
): Promise<void> {
  const key = endedKey(rec.id);
  const kept = await kv.get(key);
  if (!kept) await kv.create(key, data);
  else if (kept.operation !== 'PUT') await kv.put(key, data, { previousSeq: kept.revision });
  else if (decoder.decode(kept.value) !== data) await kv.update(key, data, kept.revision);
  await listRecent(kv, self, rec, data);
  if (live?.operation === 'PUT') {
    if (!(await removeAt(link, bucket, rec.id, live.revision)))
      throw new Error(`wrong last sequence: the live record of ${rec.id} changed meanwhile`);
  } else if (live) {
    // A delete marker left by a move killed before its purge: it and what came before it go, a later put stays.
    await link.jsm.streams.purge(`KV_${bucket}`, { filter: `$KV.${bucket}.${rec.id}`, seq: live.revision + 1 });
  }
}

// One update of the list at a time in this process: its own ends never race each other.
let listing: Promise<unknown> = Promise.resolve();

/**
 * Names `rec` in this host's list of ended records with its ended key's value (once: a repeated move finds it there,
 * and puts the value again only when it changed).
 */
function listRecent(kv: KV, self: string, rec: AgentRecord, data: string): Promise<void> {
  const next = listing.then(() => listOnce(kv, self, rec, data));
  listing = next.catch(() => undefined);
  return next;
}

/** Attempts against other processes of this host ending agents at the same moment. */
const LIST_ATTEMPTS = 50;

async function listOnce(kv: KV, self: string, rec: AgentRecord, data: string): Promise<void> {
  const key = recentKey(self);
  const at = rec.finishedAt ?? new Date().toISOString();
  for (let attempt = 0; attempt < LIST_ATTEMPTS; attempt++) {
    const entry = await kv.get(key);
    const now =
      entry?.operation === 'PUT' ? (parseRecent(entry.value) ?? { ended: 0, last: [] }) : { ended: 0, last: [] };
    // The ended key read after the list: a process that put a newer copy there since lists it after this read, so
    // either its update of the list fails this one's revision check or it comes after and carries the newer copy.
    const kept = await kv.get(endedKey(rec.id));
    const value = kept?.operation === 'PUT' ? decoder.decode(kept.value) : data;
    let record: unknown;
    try {
      record = JSON.parse(value);
    } catch {
      record = undefined;
    }
    const listed = now.last.some((x) => x.id === rec.id);
    const last = withinBytes(
      [{ id: rec.id, at, ...(record === undefined ? {} : { record }) }, ...now.last.filter((x) => x.id !== rec.id)]
        .sort((a, b) => (a.at < b.at ? 1 : a.at > b.at ? -1 : 0))
        .slice(0, RECENT_KEPT),
    );
    const next = JSON.stringify({ ended: now.ended + (listed ? 0 : 1), last } satisfies Recent);
    if (entry && listed && decoder.decode(entry.value) === next) return;
    try {
      if (entry) await kv.update(key, next, entry.revision);
      else await kv.create(key, next);
      return;
    } catch (err) {
      // Another process of this host ended one meanwhile: read the list again, a moment later.
      if (!isWrongRevision(err) && !/exists/i.test(String(err))) throw err;
      await sleep(Math.random() * 20);
    }
  }
  // Still taken: the record is under its ended key all the same; only the count and window miss it.
}

/** The list with records carried while they fit RECENT_RECORD_BYTES, newest first; the rest named only. */
function withinBytes(last: RecentItem[]): RecentItem[] {
  let bytes = 0;
  return last.map((x) => {
    if (x.record === undefined) return x;
    bytes += JSON.stringify(x.record).length;
    return bytes <= RECENT_RECORD_BYTES ? x : { id: x.id, at: x.at };
  });
}
