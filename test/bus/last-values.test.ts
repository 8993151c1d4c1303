import { jetstream, JetStreamError, jetstreamManager, type JetStreamClient } from '@nats-io/jetstream';
import { Kvm } from '@nats-io/kv';
import { connect } from '@nats-io/transport-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FEW_KEYS, lastValues } from '../../src/bus/nats/last-values.js';
import { natsServer, type NatsServer } from '../helpers/nats.js';

/**
 * Reading every key's last value while puts land (docs/design.md §18: each live agent puts
 * its record every heartbeat): each read ends and gives each key once, with its last value.
 */
describe('last values of a KV bucket under puts (real nats-server)', { timeout: 300_000 }, () => {
  let server: NatsServer;
  beforeAll(async () => {
    server = await natsServer();
  }, 120_000);
  afterAll(async () => {
    await server.kill();
  });

  it('a bucket with few keys: 40 reads under puts each give the keys once with a value put; a deleted key is absent; no bucket reads empty and makes none', async () => {
    const nc = await connect({ servers: server.url });
    try {
      const link = { js: jetstream(nc), jsm: await jetstreamManager(nc) };
      const kv = await new Kvm(link.js).create('LASTVALUES_FEW', { history: 1 });
      const n = FEW_KEYS - 1;
      for (let i = 0; i < n; i++) await kv.put(`k${i}`, 'v0');
      await kv.put('gone', 'x');
      await kv.delete('gone');
      let stop = false;
      let puts = 0;
      const putter = (async () => {
        while (!stop) {
          puts++;
          await kv.put(`k${puts % n}`, `v${puts}`);
          await new Promise((r) => setTimeout(r, 10));
        }
      })();
      try {
        for (let read = 0; read < 40; read++) {
          const got = await lastValues(link, 'LASTVALUES_FEW');
          expect(got.map((e) => e.key).sort()).toEqual(Array.from({ length: n }, (_, i) => `k${i}`).sort());
          for (const e of got) expect(new TextDecoder().decode(e.value)).toMatch(/^v\d+$/);
        }
      } finally {
        stop = true;
        await putter;
      }
      const last = new Map(
        (await lastValues(link, 'LASTVALUES_FEW')).map((e) => [e.key, new TextDecoder().decode(e.value)]),
      );
      for (let i = 0; i < n; i++)
        expect(last.get(`k${i}`)).toBe(new TextDecoder().decode((await kv.get(`k${i}`))!.value));
      expect(await lastValues(link, 'LASTVALUES_NEVER')).toEqual([]);
      await expect(link.jsm.streams.info('KV_LASTVALUES_NEVER')).rejects.toThrow(/not found/);
    } finally {
      await nc.close();
    }
  });

  it('40 reads of a 20-key bucket, put to every 10 ms meanwhile, each end with the 20 keys once; a deleted key is absent', async () => {
    const nc = await connect({ servers: server.url });
    try {
      const link = { js: jetstream(nc), jsm: await jetstreamManager(nc) };
      const kv = await new Kvm(link.js).create('LASTVALUES', { history: 1 });
      for (let i = 0; i < 20; i++) await kv.put(`k${i}`, 'v0');
      await kv.put('gone', 'x');
      await kv.delete('gone');
      let stop = false;
      let n = 0;
      const putter = (async () => {
        while (!stop) {
          n++;
          await kv.put(`k${n % 20}`, `v${n}`);
          await new Promise((r) => setTimeout(r, 10));
        }
      })();
      try {
        for (let read = 0; read < 40; read++) {
          const got = await lastValues(link, 'LASTVALUES');
          expect(got.map((e) => e.key).sort()).toEqual(Array.from({ length: 20 }, (_, i) => `k${i}`).sort());
        }
      } finally {
        stop = true;
        await putter;
      }
      // Quiet now: each key's value is its last put.
      const last = new Map(
        (await lastValues(link, 'LASTVALUES')).map((e) => [e.key, new TextDecoder().decode(e.value)]),
      );
      for (let i = 0; i < 20; i++)
        expect(last.get(`k${i}`)).toBe(new TextDecoder().decode((await kv.get(`k${i}`))!.value));
      // No consumer is left behind by the reads.
      expect((await link.jsm.consumers.list('KV_LASTVALUES').next()).length).toBe(0);
    } finally {
      await nc.close();
    }
  });
  it('a fetch that fails midway (heartbeats missed on a loaded machine) still gives every key, each with its last value', async () => {
    const nc = await connect({ servers: server.url });
    try {
      const js = jetstream(nc);
      const jsm = await jetstreamManager(nc);
      const kv = await new Kvm(js).create('LASTVALUES_FLAKY', { history: 1 });
      // More keys than are got one by one: the read goes through the consumer.
      const n = FEW_KEYS + 4;
      for (let i = 0; i < n; i++) await kv.put(`k${i}`, `v${i}`);
      // The consumer's fetch as the client gives it when its heartbeat monitor gives up: it throws while being read.
      const failing = {
        consumers: {
          get: () =>
            Promise.resolve({
              fetch: () =>
                Promise.resolve({
                  [Symbol.asyncIterator]: () => ({
                    next: () => Promise.reject(new JetStreamError('heartbeats missed')),
                  }),
                }),
            }),
        },
      } as unknown as JetStreamClient;
      const got = await lastValues({ js: failing, jsm }, 'LASTVALUES_FLAKY');
      expect(got.map((e) => [e.key, new TextDecoder().decode(e.value)]).sort()).toEqual(
        Array.from({ length: n }, (_, i) => [`k${i}`, `v${i}`]).sort(),
      );
    } finally {
      await nc.close();
    }
  });
});
