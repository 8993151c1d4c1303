import { jetstream, jetstreamManager } from '@nats-io/jetstream';
import { Kvm } from '@nats-io/kv';
import { connect } from '@nats-io/transport-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FEW_KEYS, lastValues } from '../../src/bus/nats/last-values.js';
import { removeAt } from '../../src/bus/nats/remove-at.js';
import { natsServer, type NatsServer } from '../helpers/nats.js';

/**
 * Reading the live keys while other keys come and go (docs/design.md §18: an agent's record is put, then moved to its
 * ended key — its live key deleted and the marker purged — as others start): every key that lives throughout is in
 * every read.
 */
describe('last values of a KV bucket under deletes (real nats-server)', { timeout: 300_000 }, () => {
  let server: NatsServer;
  beforeAll(async () => {
    server = await natsServer();
  }, 120_000);
  afterAll(async () => {
    await server.kill();
  });

  for (const stable of [FEW_KEYS - 6, FEW_KEYS + 8])
    it(`${stable} keys that stay are in each of 60 reads while other keys are put and removed`, async () => {
      const nc = await connect({ servers: server.url });
      try {
        const link = { nc, js: jetstream(nc), jsm: await jetstreamManager(nc) };
        const bucket = `LV_DEL_${stable}`;
        const kv = await new Kvm(link.js).create(bucket, { history: 1 });
        for (let i = 0; i < stable; i++) await kv.put(`s${i}`, 'v');
        let stop = false;
        const churn = async (w: number) => {
          for (let n = 0; !stop; n++) {
            const key = `c${w}x${n % 8}`;
            const rev = await kv.put(key, 'x');
            await removeAt(link, bucket, key, rev);
          }
        };
        const churners = [0, 1, 2].map(churn);
        try {
          for (let read = 0; read < 60; read++) {
            // A read that does not end within 20 s is a failed one (it waited for a count that never came).
            let timer: NodeJS.Timeout | undefined;
            const late = new Promise<never>((_, reject) => {
              timer = setTimeout(() => reject(new Error(`read ${read} did not end within 20 s`)), 20_000);
            });
            const values = await Promise.race([lastValues(link, bucket), late]).finally(() => clearTimeout(timer));
            const keys = values.map((e) => e.key).filter((k) => k.startsWith('s'));
            expect(keys.sort(), `read ${read}`).toEqual(Array.from({ length: stable }, (_, i) => `s${i}`).sort());
          }
        } finally {
          stop = true;
          await Promise.all(churners);
        }
      } finally {
        await nc.close();
      }
    });
});
