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

/** A host's list of its ended records (`recent.<host>`). */
export interface Recent {
  /** How many of its records have ended under `ended.` (each counted once). */
  ended: number;
  /** The last RECENT_KEPT to end, newest first. */
  last: { id: string; at: string }[];
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
  link: Link,
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
  await listRecent(kv, self, rec);
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

/** Names `rec` in this host's list of ended records (once: a repeated move finds it there). */
function listRecent(kv: KV, self: string, rec: AgentRecord): Promise<void> {
  const next = listing.then(() => listOnce(kv, self, rec));
  listing = next.catch(() => undefined);
  return next;
}

/** Attempts against other processes of this host ending agents at the same moment. */
const LIST_ATTEMPTS = 50;

async function listOnce(kv: KV, self: string, rec: AgentRecord): Promise<void> {
  const key = recentKey(self);
  const at = rec.finishedAt ?? new Date().toISOString();
  for (let attempt = 0; attempt < LIST_ATTEMPTS; attempt++) {
    const entry = await kv.get(key);
    const now =
      entry?.operation === 'PUT' ? (parseRecent(entry.value) ?? { ended: 0, last: [] }) : { ended: 0, last: [] };
    if (now.last.some((x) => x.id === rec.id)) return;
    const last = [{ id: rec.id, at }, ...now.last]
      .sort((a, b) => (a.at < b.at ? 1 : a.at > b.at ? -1 : 0))
      .slice(0, RECENT_KEPT);
    const next = JSON.stringify({ ended: now.ended + 1, last } satisfies Recent);
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
