import { existsSync } from 'node:fs';
import { Kvm, type KV } from '@nats-io/kv';
import { isTerminal } from '../../fleet/record-status.js';
import { listRecords } from '../../fleet/registry.js';
import type { Layout } from '../../layout/layout.js';
import { sleep } from '../../sleep.js';
import { owedBusGc, settleBusGc } from '../gc-owed.js';
import type { BusNames } from '../names.js';
import type { BusGcResult } from '../types.js';
import { endedKey, parseRecent, recentKey, type Recent } from './ended.js';
import { lastValues, type LastValue } from './last-values.js';
import type { Link, NatsLink } from './link.js';
import { isWrongRevision } from './lost.js';
import { fromEntry, recordsOf } from './record-reads.js';
import { removeAt } from './remove-at.js';

/**
 * `flotilla gc` on a `nats://` bus (§18; docs/scale-out.md "What gc removes from the bus"):
 * what the host's gc removed from its registry leaves the bus too, so a fleet run for weeks
 * does not make every reader of all records slower.
 * - The records this fleet root's gc removed (src/bus/gc-owed.ts: this run's, and those of a
 *   run that could not reach the bus): their `ended.<id>` key, or a terminal copy under the id
 *   (marked lost, or written before ended keys), when it is this host's and still not back in
 *   the registry. Another host's records are that host's gc's to remove.
 * - Their names in `recent.<host>`, and its count by as many: it counts the ended records on
 *   the bus, as `status`'s "N finished on HOST" line does.
 * - Their tasks' once-markers (DONE bucket).
 * - In the trees bucket, the spawn numbers (`tree.<root>.<n>`) and kept usage
 *   (`usage.<root>.<agent>`) of trees no record on the bus (any host, live or ended) nor in
 *   this registry belongs to, and the child places (`child.<parent>.<n>`) whose parent and
 *   child both have no record left: nothing will spawn there again. A key written in the last
 *   SPAWN_WRITE_GRACE_MS stays, since a spawner takes its number before the child's record
 *   reaches the bus.
 * Every delete names the revision read, and its marker is purged up to itself alone, so a
 * put by another process meanwhile is never removed (removeAt).
 */

/**
 * Longer than a spawner takes from taking a tree number or a place to putting the child's record on the bus (as
 * children.ts).
 */
const SPAWN_WRITE_GRACE_MS = 60_000;
/** Records handled at once. */
const BATCH = 32;

export interface GcOptions {
  self: string;
  now: number;
}

export async function gcBus(
  layout: Layout,
  names: BusNames,
  connection: NatsLink,
  opts: GcOptions,
): Promise<BusGcResult> {
  const link = await connection.open();
  const kvm = new Kvm(link.js);
  const [records, done, trees] = await Promise.all([
    kvm.create(names.recordsBucket, { history: 1 }),
    kvm.create(names.doneBucket, { history: 1 }),
    kvm.create(names.treesBucket, { history: 1 }),
  ]);
  const removed = new Set<string>();
  let counted = 0;
  const owed = owedBusGc(layout);
  for (let i = 0; i < owed.length; i += BATCH) {
    await Promise.all(
      owed.slice(i, i + BATCH).map(async (id) => {
        // Written here again since (its keys on the bus are this registry's again to publish).
        if (existsSync(layout.registryFile(id))) return settleBusGc(layout, id);
        let settled = true;
        for (const key of [endedKey(id), id]) {
          const entry = await records.get(key);
          const rec = entry?.operation === 'PUT' ? fromEntry(entry) : undefined;
          // The registry looked at after the revision was read: a process that writes the record
          // again writes its file first and publishes after, so either the file is seen here, or
          // its put lands after this read — before the delete (which then fails) or after it (kept).
          if (
            !entry ||
            !rec ||
            rec.host !== opts.self ||
            !isTerminal(rec.status) ||
            existsSync(layout.registryFile(id))
          )
            continue;
          if (!(await removeAt(link, names.recordsBucket, key, entry.revision))) {
            // Put again meanwhile: looked at again by the next gc.
            settled = false;
            continue;
          }
          removed.add(id);
          if (key !== id) counted++;
        }
        if (settled) settleBusGc(layout, id);
      }),
    );
  }
  await unlist(records, recentKey(opts.self), removed, counted);
  const markers =
    removed.size === 0
      ? 0
      : await removeKeys(link, done, names.doneBucket, '>', (v) => removed.has(v.key.slice(0, v.key.indexOf('.'))));

  // What still has a record: on the bus (every host) and in this host's registry.
  const kept = [...recordsOf(await lastValues(link, names.recordsBucket)), ...listRecords(layout)];
  const roots = new Set(kept.map((r) => r.rootId));
  const ids = new Set(kept.map((r) => r.id));
  const gone = new Set<string>();
  await removeKeys(link, trees, names.treesBucket, '>', (v) => {
    if (opts.now - v.created.getTime() < SPAWN_WRITE_GRACE_MS) return false;
    const [kind, owner] = v.key.split('.');
    if (!owner) return false;
    if (kind === 'child') return !ids.has(owner) && !ids.has(placeHolder(v.value));
    if ((kind === 'tree' || kind === 'usage') && !roots.has(owner)) {
      gone.add(owner);
      return true;
    }
    return false;
  });
  return { records: [...removed].sort(), trees: [...gone].sort(), markers };
}

/** The agent a child place names (children.ts), or '' when it names none. */
function placeHolder(value: Uint8Array): string {
  try {
    const agent = (JSON.parse(new TextDecoder().decode(value)) as { agent?: unknown }).agent;
    return typeof agent === 'string' ? agent : '';
  } catch {
    return '';
  }
}

/** Removes each key under `pattern` that `drop` picks, at the revision read; how many went. */
async function removeKeys(
  link: Link,
  kv: KV,
  bucket: string,
  pattern: string,
  drop: (v: LastValue) => boolean,
): Promise<number> {
  let n = 0;
  for (const v of await lastValues(link, bucket, pattern)) {
    if (!drop(v)) continue;
    const entry = await kv.get(v.key);
    if (entry?.operation === 'PUT' && (await removeAt(link, bucket, v.key, entry.revision))) n++;
  }
  return n;
}

/** Attempts against this host's processes ending agents meanwhile (each a revision-checked update of the list). */
const LIST_ATTEMPTS = 50;

/** Takes `ids` out of this host's `recent.<host>` list and `counted` off its count of ended records. */
async function unlist(kv: KV, key: string, ids: ReadonlySet<string>, counted: number): Promise<void> {
  if (ids.size === 0) return;
  for (let attempt = 0; attempt < LIST_ATTEMPTS; attempt++) {
    const entry = await kv.get(key);
    const list = entry?.operation === 'PUT' ? parseRecent(entry.value) : null;
    if (!entry || !list) return;
    const next: Recent = { ended: Math.max(0, list.ended - counted), last: list.last.filter((x) => !ids.has(x.id)) };
    try {
      await kv.update(key, JSON.stringify(next), entry.revision);
      return;
    } catch (err) {
      if (!isWrongRevision(err)) throw err;
      await sleep(Math.random() * 20);
    }
  }
}
