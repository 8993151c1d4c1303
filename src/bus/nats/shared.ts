import type { Config } from '../../config/schema.js';
import { selfHost } from '../../hosts/self.js';
import type { Layout } from '../../layout/layout.js';
import { busNames } from '../names.js';
import type { SharedKv, SharedStore } from '../shared.js';
import { lastValues } from './last-values.js';
import { boundBucket } from './bound-bucket.js';
import { natsLink, perLink } from './link.js';
import { isWrongRevision } from './lost.js';
import { isStreamNotFound } from './reads.js';
import { keyNames as keysOf } from './record-reads.js';
import { withTimeout } from './timeout.js';

const TIMEOUT_MS = 5_000;
const decoder = new TextDecoder();

/**
 * A shared store on the fleet's NATS server (bus/shared.ts): a JetStream KV bucket of one
 * value per key (history 1), written only with `create` (the key has no value) or `update`
 * (the key's revision is still the one read), which the server checks — the compare-and-set
 * the boards' claims and the leases' takes rest on. Over the process's one connection to the bus (link.ts).
 */
export function natsShared(
  layout: Layout,
  fleet: Config['fleet'],
  which: SharedStore,
): { kv: SharedKv; close(): Promise<void> } {
  const names = busNames(layout, fleet.name, selfHost(fleet));
  const bucket = which === 'board' ? names.boardBucket : names.leasesBucket;
  const link = natsLink(fleet.bus, fleet.nats);
  // A writer makes sure of the bucket (created when missing); a reader binds to it (no request),
  // and a bucket nobody has written yet reads as empty.
  const kvm = async (l: { js: import('@nats-io/jetstream').JetStreamClient }) =>
    new (await import('./client.js')).Kvm(l.js);
  const made = perLink(link, async (l) =>
    withTimeout((await kvm(l)).create(bucket, { history: 1, timeout: TIMEOUT_MS }), TIMEOUT_MS),
  );
  const bound = perLink(link, async (l) => boundBucket(l.js, l.jsm, bucket));
  /** A write the server refused because the key moved on: null; anything else throws. */
  const checked = async (write: Promise<number>): Promise<number | null> => {
    try {
      return await withTimeout(write, TIMEOUT_MS);
    } catch (err) {
      if (isWrongRevision(err) || /exists/i.test(String(err))) return null;
      throw err;
    }
  };
  const kv: SharedKv = {
    async get(key) {
      const b = await bound();
      let e;
      try {
        e = await withTimeout(b.get(key), TIMEOUT_MS);
      } catch (err) {
        if (isStreamNotFound(err)) return null;
        throw err;
      }
      return e && e.operation === 'PUT' ? { value: decoder.decode(e.value), revision: e.revision } : null;
    },
    async create(key, value) {
      return checked((await made()).create(key, value));
    },
    async update(key, value, revision) {
      return checked((await made()).update(key, value, revision));
    },
    async values(pattern) {
      const all = await withTimeout(lastValues(link, bucket, pattern), 4 * TIMEOUT_MS);
      return all.map((v) => ({ key: v.key, value: decoder.decode(v.value) }));
    },
    async keys(pattern) {
      // Names only, from the stream's subject counts: a key deleted through the KV library keeps its tombstone and is
      // listed (the board drops its index keys whole, `drop`).
      return withTimeout(keysOf(link, bucket, [pattern]), TIMEOUT_MS);
    },
    async drop(key) {
      const l = await link.open();
      try {
        await withTimeout(l.jsm.streams.purge(`KV_${bucket}`, { filter: `$KV.${bucket}.${key}` }), TIMEOUT_MS);
      } catch (err) {
        // A bucket nobody has written yet holds nothing to drop.
        if (!isStreamNotFound(err)) throw err;
      }
    },
    async empty() {
      const reads = await link.reads();
      // A bucket nobody has written yet holds nothing.
      return ((await withTimeout(reads.streamState(`KV_${bucket}`), TIMEOUT_MS))?.messages ?? 0) === 0;
    },
  };
  return { kv, close: () => link.close() };
}
