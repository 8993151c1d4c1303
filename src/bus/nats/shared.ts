import { Kvm } from '@nats-io/kv';
import type { Config } from '../../config/schema.js';
import { selfHost } from '../../hosts/self.js';
import type { Layout } from '../../layout/layout.js';
import { busNames } from '../names.js';
import type { SharedKv, SharedStore } from '../shared.js';
import { lastValues } from './last-values.js';
import { natsLink } from './link.js';
import { isWrongRevision } from './lost.js';
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
  let opening: ReturnType<typeof open> | null = null;
  async function open() {
    const l = await link.open();
    const kv = await withTimeout(new Kvm(l.js).create(bucket, { history: 1, timeout: TIMEOUT_MS }), TIMEOUT_MS);
    return { l, kv };
  }
  const ready = () => {
    opening ??= open();
    opening.catch(() => {
      opening = null;
    });
    return opening;
  };
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
      const { kv: b } = await ready();
      const e = await withTimeout(b.get(key), TIMEOUT_MS);
      return e && e.operation === 'PUT' ? { value: decoder.decode(e.value), revision: e.revision } : null;
    },
    async create(key, value) {
      const { kv: b } = await ready();
      return checked(b.create(key, value));
    },
    async update(key, value, revision) {
      const { kv: b } = await ready();
      return checked(b.update(key, value, revision));
    },
    async values(pattern) {
      const { l } = await ready();
      const all = await withTimeout(lastValues(l, bucket, pattern), 4 * TIMEOUT_MS);
      return all.map((v) => ({ key: v.key, value: decoder.decode(v.value) }));
    },
  };
  return { kv, close: () => link.close() };
}
