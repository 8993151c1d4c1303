import { jetstream, jetstreamManager } from '@nats-io/jetstream';
import { Kvm } from '@nats-io/kv';
import { connect } from '@nats-io/transport-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { endedKey, moveEnded } from '../../src/bus/nats/ended.js';
import type { AgentRecord } from '../../src/fleet/record.js';
import { recordInput } from '../helpers/records.js';
import { natsServer, type NatsServer } from '../helpers/nats.js';

/**
 * An ended record leaves the live keys (src/bus/nats/ended.ts) without taking anyone else's
 * write with it: the fleet's lost mark, put on the live key by another host, is the one
 * terminal word that must survive the move (docs/design.md §18).
 */
describe('moving an ended record out of the live keys (real nats-server)', { timeout: 120_000 }, () => {
  let server: NatsServer;
  beforeAll(async () => {
    server = await natsServer();
  }, 120_000);
  afterAll(async () => {
    await server.kill();
  });

  const open = async (bucket: string) => {
    const nc = await connect({ servers: server.url });
    const link = { nc, js: jetstream(nc), jsm: await jetstreamManager(nc) };
    const kv = await new Kvm(link.js).create(bucket, { history: 1 });
    return { nc, link, kv };
  };
  const rec = (id: string, status: AgentRecord['status']) =>
    ({ ...recordInput(id), status, finishedAt: new Date().toISOString(), host: 'a' }) as AgentRecord;

  it('moves it, and leaves no delete marker among the live keys', async () => {
    const { nc, link, kv } = await open('MOVE1');
    try {
      await kv.put('w-aaaaaa', JSON.stringify(rec('w-aaaaaa', 'working')));
      const live = await kv.get('w-aaaaaa');
      const ended = JSON.stringify(rec('w-aaaaaa', 'completed'));
      await moveEnded(link, kv, 'MOVE1', live, rec('w-aaaaaa', 'completed'), ended, 'a');
      expect(new TextDecoder().decode((await kv.get(endedKey('w-aaaaaa')))!.value)).toBe(ended);
      const keys: string[] = [];
      for await (const k of await kv.keys('*')) keys.push(k);
      expect(keys).toEqual([]);
      expect(
        await link.jsm.streams.getMessage('KV_MOVE1', { last_by_subj: '$KV.MOVE1.w-aaaaaa' }).catch(() => null),
      ).toBeNull();
    } finally {
      await nc.close();
    }
  });

  it('a move finished after a crash (the delete marker left) keeps a lost mark put after the marker', async () => {
    const { nc, link, kv } = await open('MOVE2');
    try {
      await kv.put('w-bbbbbb', JSON.stringify(rec('w-bbbbbb', 'working')));
      await kv.delete('w-bbbbbb');
      // The harness was killed between its delete and its purge; it reads the marker as `live`.
      const marker = await kv.get('w-bbbbbb');
      expect(marker?.operation).toBe('DEL');
      // Meanwhile the fleet marked it lost on its live key (another host's write).
      const lost = JSON.stringify(rec('w-bbbbbb', 'lost'));
      await kv.put('w-bbbbbb', lost);
      await moveEnded(
        link,
        kv,
        'MOVE2',
        marker,
        rec('w-bbbbbb', 'completed'),
        JSON.stringify(rec('w-bbbbbb', 'completed')),
        'a',
      );
      const now = await kv.get('w-bbbbbb');
      expect(now?.operation).toBe('PUT');
      expect(new TextDecoder().decode(now!.value)).toBe(lost);
    } finally {
      await nc.close();
    }
  });

  it('a live key put since it was read is not deleted: the move throws a wrong revision for the caller to read again', async () => {
    const { nc, link, kv } = await open('MOVE3');
    try {
      await kv.put('w-cccccc', JSON.stringify(rec('w-cccccc', 'working')));
      const live = await kv.get('w-cccccc');
      const lost = JSON.stringify(rec('w-cccccc', 'lost'));
      await kv.put('w-cccccc', lost);
      await expect(
        moveEnded(
          link,
          kv,
          'MOVE3',
          live,
          rec('w-cccccc', 'completed'),
          JSON.stringify(rec('w-cccccc', 'completed')),
          'a',
        ),
      ).rejects.toThrow(/wrong last sequence/);
      expect(new TextDecoder().decode((await kv.get('w-cccccc'))!.value)).toBe(lost);
    } finally {
      await nc.close();
    }
  });
});
