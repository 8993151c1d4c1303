import type { KvEntry } from '@nats-io/kv';
import type { BoundBucket } from './bound-bucket.js';
import { parseAgentRecord } from '../../fleet/record-validate.generated.js';
import type { AgentRecord } from '../../fleet/record.js';
import type { RecentRecords } from '../types.js';
import { endedKey, parseRecent, recentKey } from './ended.js';
import { lastValues, readsOf, type LastValue, type ReadSource } from './last-values.js';

/**
 * Reading the RECORDS bucket (§18) with its ended keys (nats/ended.ts): a record is under its
 * id while it lives (or was marked lost) and under `ended.<id>` once it ended on its host; the
 * `recent.<host>` lists are no records. A record found under both (its host moved it as the
 * fleet marked it lost) is the live key's: what the parent was told.
 */

/** Every record among `values` (each key's last value), once per agent. */
export function recordsOf(values: readonly LastValue[]): AgentRecord[] {
  const byId = new Map<string, AgentRecord>();
  const ended: AgentRecord[] = [];
  for (const v of values) {
    if (v.key.startsWith('recent.')) continue;
    const rec = fromEntry(v);
    if (!rec) continue;
    if (v.key.startsWith('ended.')) ended.push(rec);
    else byId.set(rec.id, rec);
  }
  for (const rec of ended) if (!byId.has(rec.id)) byId.set(rec.id, rec);
  return [...byId.values()];
}

/**
 * The keys of a bucket under each pattern, from the stream's subject counts (one request,
 * names only): an id lookup by prefix reads no record but the ones that match.
 */
export async function keyNames(source: ReadSource, bucket: string, patterns: readonly string[]): Promise<string[]> {
  const stream = `KV_${bucket}`;
  const prefix = `$KV.${bucket}.`;
  const reads = await readsOf(source);
  const out: string[] = [];
  for (const p of patterns) {
    const state = await reads.streamState(stream, `${prefix}${p}`);
    // A bucket nobody has written yet holds no keys.
    if (!state) return [];
    out.push(...Object.keys(state.subjects ?? {}).map((s) => s.slice(prefix.length)));
  }
  return out;
}

/** Past this many ended records not in this host's registry, one bulk read beats a get each. */
const FEW = 256;

/**
 * Every record on the bus but this host's own ended ones (`status --all` on a bus): the live
 * keys' values, and the ended keys whose id this host's registry (`localIds`) does not hold —
 * those the hosts' `recent.<host>` lists carry taken from there, the rest each got by key while
 * they are few, else all `ended.*` read at once. This host's history is
 * then read once, from its files, not a second time from the bus.
 */
export async function othersOf(
  link: ReadSource,
  kv: () => Promise<BoundBucket>,
  bucket: string,
  localIds: ReadonlySet<string>,
): Promise<AgentRecord[]> {
  const [live, names, lists] = await Promise.all([
    lastValues(link, bucket, '*'),
    keyNames(link, bucket, [endedKey('*')]),
    lastValues(link, bucket, recentKey('*')),
  ]);
  // The records the hosts' lists carry (their last to end) need no get of their own.
  const carried = new Map<string, AgentRecord>();
  for (const l of lists)
    for (const x of parseRecent(l.value)?.last ?? []) {
      const rec = x.record === undefined || localIds.has(x.id) ? undefined : fromValue(x.record);
      if (rec?.id === x.id) carried.set(x.id, rec);
    }
  const endedIds = new Set(names.map((k) => k.slice(endedKey('').length)));
  const foreign = [...endedIds].filter((id) => !localIds.has(id) && !carried.has(id));
  let ended: LastValue[] = [];
  if (foreign.length > FEW) ended = await lastValues(link, bucket, endedKey('*'));
  else {
    const bucketKv = foreign.length ? await kv() : undefined;
    const got = await Promise.all(foreign.map((id) => bucketKv!.get(endedKey(id))));
    ended = got
      .filter((e): e is KvEntry => e?.operation === 'PUT')
      .map((e) => ({ key: e.key, value: e.value, created: e.created }));
  }
  const records = recordsOf([...live, ...ended]);
  // A live key's record wins over a carried copy (recordsOf's rule for ended keys), as a bulk read's does; a carried
  // one whose ended key is gone (gc) is not shown.
  const read = new Set(records.map((r) => r.id));
  return [...records, ...[...carried.values()].filter((r) => !read.has(r.id) && endedIds.has(r.id))];
}

/** A record by id: its live key, else its ended key. */
export async function getRecord(kv: BoundBucket, id: string): Promise<AgentRecord | undefined> {
  const live = await kv.get(id);
  if (live?.operation === 'PUT') return fromEntry(live);
  const ended = await kv.get(endedKey(id));
  return ended?.operation === 'PUT' ? fromEntry(ended) : undefined;
}

/**
 * The other hosts' records as `status` and the dashboard show them (§17.6): `live` (every
 * live key's last value) and, for each other host, the ended records its `recent.<host>`
 * list names — carried in the list, else got by key — `window` of them at most, and how many more ended there.
 */
export async function recentOf(
  kv: () => Promise<BoundBucket>,
  live: readonly LastValue[],
  lists: readonly LastValue[],
  self: string,
  window: number,
): Promise<RecentRecords> {
  const records = recordsOf(live).filter((r) => r.host !== self);
  const shown = new Set(records.map((r) => r.id));
  const more: Record<string, number> = {};
  await Promise.all(
    lists.map(async (l) => {
      const host = l.key.slice(recentKey('').length);
      const list = parseRecent(l.value);
      if (host === self || !list) return;
      // The records the list carries come with it (one get for the whole window); the rest one get each.
      const listed = list.last.slice(0, window);
      const read = (
        await Promise.all(
          listed
            .filter((x) => !shown.has(x.id))
            .map(async (x) => {
              const carried = x.record === undefined ? undefined : fromValue(x.record);
              if (carried?.id === x.id) return carried;
              // Bound only when some record is not carried (a list written before they were).
              const e = await (await kv()).get(endedKey(x.id));
              return e?.operation === 'PUT' ? fromEntry(e) : undefined;
            }),
        )
      ).filter((r): r is AgentRecord => r !== undefined);
      records.push(...read);
      // One listed but read from its live key (moved as this read ran) is shown all the same.
      more[host] = Math.max(0, list.ended - read.length - listed.filter((x) => shown.has(x.id)).length);
    }),
  );
  return { records, more };
}

export function fromEntry(e: Pick<KvEntry, 'value'>): AgentRecord | undefined {
  try {
    return fromValue(JSON.parse(new TextDecoder().decode(e.value)));
  } catch {
    return undefined;
  }
}

/** A record from its parsed JSON, or undefined when it is not one. */
function fromValue(value: unknown): AgentRecord | undefined {
  const parsed = parseAgentRecord(value);
  return parsed.success ? parsed.data : undefined;
}
