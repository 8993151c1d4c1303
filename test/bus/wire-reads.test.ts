import { jetstream, jetstreamManager } from '@nats-io/jetstream';
import { Kvm } from '@nats-io/kv';
import { connect } from '@nats-io/transport-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defaultConfig } from '../../src/config/schema.js';
import { FEW_KEYS, lastValues, type LastValue } from '../../src/bus/nats/last-values.js';
import { natsLink } from '../../src/bus/nats/link.js';
import { keyNames } from '../../src/bus/nats/record-reads.js';
import { natsServer, type NatsServer } from '../helpers/nats.js';

const text = (vs: LastValue[]) =>
  vs.map((v) => [v.key, new TextDecoder().decode(v.value), v.created.getTime()] as const).sort();

/**
 * A look's reads without the NATS client (docs/design.md §18, §14): a process that has not
 * written reads the bus over a bare reader of the text protocol (src/bus/nats/wire.ts) and
 * gets what the client's reads give — each key's last value and its time, with deleted and
 * purged keys absent, through direct gets (few keys) and a pull consumer (many) — without
 * ever opening the client's connection.
 */
describe("a look's reads over the bare reader (real nats-server)", { timeout: 120_000 }, () => {
  let server: NatsServer;
  beforeAll(async () => {
    server = await natsServer();
  }, 120_000);
  afterAll(async () => {
    await server.kill();
  });

  it('give the same keys, values and times as the client, with no client connection opened', async () => {
    const nc = await connect({ servers: server.url });
    const client = { js: jetstream(nc), jsm: await jetstreamManager(nc) };
    const link = natsLink(server.url, defaultConfig().fleet.nats);
    try {
      const kvm = new Kvm(client.js);
      const few = await kvm.create('WIRE_FEW', { history: 1 });
      for (let i = 0; i < 3; i++) await few.put(`k${i}`, `few ${i}`);
      await few.delete('k1');
      const many = await kvm.create('WIRE_MANY', { history: 1 });
      for (let i = 0; i < 4 * FEW_KEYS; i++) await many.put(`ended.a${i}`, `many ${i}`);
      await many.put('live', 'x');
      await many.delete('ended.a3');
      await many.purge('ended.a7');

      const fewRead = await lastValues(link, 'WIRE_FEW');
      expect(text(fewRead).map(([k, v]) => [k, v])).toEqual([
        ['k0', 'few 0'],
        ['k2', 'few 2'],
      ]);
      expect(text(fewRead)).toEqual(text(await lastValues(client, 'WIRE_FEW')));

      const manyRead = await lastValues(link, 'WIRE_MANY', 'ended.*');
      expect(manyRead).toHaveLength(4 * FEW_KEYS - 2);
      expect(manyRead.find((v) => v.key === 'ended.a3' || v.key === 'ended.a7')).toBeUndefined();
      expect(text(manyRead)).toEqual(text(await lastValues(client, 'WIRE_MANY', 'ended.*')));

      expect((await keyNames(link, 'WIRE_MANY', ['*'])).sort()).toEqual(['live']);
      // A bucket nobody wrote reads as empty, and the read makes none.
      expect(await lastValues(link, 'WIRE_NEVER')).toEqual([]);
      await expect(client.jsm.streams.info('KV_WIRE_NEVER')).rejects.toThrow(/not found/);
      expect(await (await link.reads()).account()).toBe(nc.info?.version);
      // All of it over the bare reader: the client's connection was never opened.
      expect(link.opened()).toBe(false);
    } finally {
      await link.close();
      await nc.close();
    }
  });
});
