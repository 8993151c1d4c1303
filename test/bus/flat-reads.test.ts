import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { busFor, closeBuses, type Bus } from '../../src/bus/open.js';
import { DEFAULT_FLEET_SETTINGS } from '../../src/bus/settings.js';
import type { AgentRecord } from '../../src/fleet/record.js';
import { createRecord } from '../../src/fleet/registry.js';
import { findInFleet } from '../../src/hosts/elsewhere.js';
import { tempFleet, type TempFleet } from '../helpers/fleet.js';
import { natsServer, type NatsServer } from '../helpers/nats.js';
import { recordInput } from '../helpers/records.js';

/**
 * Reads on a `nats://` bus that stay flat with the fleet's history (docs/design.md
 * §18): the budget check before each model call, list_agents's tree and an id lookup by prefix
 * read live keys, one tree's kept usage and key names — never every ended record. Counted, not
 * timed: the server's count of messages it sent (every record a read pulls is one message) over
 * the same reads with 20 and then 320 ended agents of other trees on the bus. A read that went
 * back to pulling every record would fetch 300 more.
 */
describe('bus reads flat in the number of ended agents (real nats-server)', { timeout: 300_000 }, () => {
  let server: NatsServer;
  const fleets: TempFleet[] = [];
  beforeAll(async () => {
    server = await natsServer({ monitor: true });
  }, 120_000);
  afterAll(async () => {
    await server.kill();
  });
  afterEach(async () => {
    await closeBuses();
    for (const f of fleets.splice(0)) f.cleanup();
  });

  const hostFleet = (host: string, name = 'flat'): { fleet: TempFleet; bus: Bus } => {
    const fleet = tempFleet(`flotilla-flat-${host}-`);
    fleets.push(fleet);
    return { fleet, bus: busFor(fleet.layout, { fleet: { ...DEFAULT_FLEET_SETTINGS, bus: server.url, name, host } }) };
  };
  const hostBus = (host: string): Bus => hostFleet(host).bus;
  const on = (id: string, over: Partial<AgentRecord>): AgentRecord =>
    ({ ...recordInput(id), host: 'b', ...over }) as AgentRecord;
  const ended = (id: string, rootId: string, tokens: number): AgentRecord =>
    on(id, {
      rootId,
      parentId: rootId === id ? null : rootId,
      depth: rootId === id ? 0 : 1,
      status: 'completed',
      finishedAt: new Date().toISOString(),
      usage: { inputTokens: tokens, outputTokens: 0, costUsd: null },
    });
  /** Publishes ended records of one-agent trees, as their host does when each ends. */
  const endMany = async (b: Bus, from: number, to: number): Promise<void> => {
    for (let i = from; i < to; i += 32) {
      const batch = Array.from({ length: Math.min(32, to - i) }, (_, k) =>
        ended(`old-${String(i + k).padStart(4, '0')}`, `old-${String(i + k).padStart(4, '0')}`, 1000),
      );
      expect(await Promise.all(batch.map((r) => b.records.publish(r)))).toEqual(batch.map(() => 'published'));
    }
  };
  /** The messages the server sent while `read` ran (the reader's, since nothing else is connected and busy). */
  const sent = async (read: () => Promise<unknown>): Promise<number> => {
    const before = await server.messagesSent();
    await read();
    return (await server.messagesSent()) - before;
  };

  it("the budget check, list_agents's tree and a lookup by prefix fetch as many messages with 320 ended agents as with 20", async () => {
    const b = hostBus('b');
    const a = hostBus('a');
    // On b: a tree `lead` at work (one live agent, two children ended), and ended agents of other trees.
    const tokens = (n: number) => ({ inputTokens: n, outputTokens: 0, costUsd: null });
    expect(await b.records.publish(on('lead', { status: 'working', usage: tokens(100) }))).toBe('published');
    for (const [id, n] of [
      ['lead-kid1', 10],
      ['lead-kid2', 20],
    ] as const)
      expect(await b.records.publish(ended(id, 'lead', n))).toBe('published');
    await endMany(b, 0, 20);

    const reads = {
      budget: () => a.caps.treeUsageElsewhere('lead'),
      tree: () => a.records.tree('lead'),
      lookup: () => findInFleet(a.records, 'lead-k'),
    };
    // What each gives: the tree's usage on b, its live record and kept ended ones, the id the prefix names (two match:
    // ambiguous).
    expect(await reads.budget()).toEqual({ tokens: 130, costUsd: 0 });
    const tree = await reads.tree();
    expect(tree.live.map((r) => r.id)).toEqual(['lead']);
    expect([...tree.ended.keys()].sort()).toEqual(['lead-kid1', 'lead-kid2']);
    await expect(reads.lookup()).rejects.toThrow(/'lead-k' matches 2 agents/);
    expect((await findInFleet(a.records, 'lead-kid2'))?.status).toBe('completed');

    // Counted with 20 ended agents of other trees, then with 320 (each read once before, so
    // its buckets and connection are made).
    const count = async (): Promise<Record<keyof typeof reads, number>> => {
      const out = {} as Record<keyof typeof reads, number>;
      for (const [k, read] of Object.entries(reads) as [keyof typeof reads, () => Promise<unknown>][])
        out[k] = await sent(() => read().catch(() => undefined));
      return out;
    };
    const few = await count();
    await endMany(b, 20, 320);
    const many = await count();
    for (const k of Object.keys(reads) as (keyof typeof reads)[]) {
      // A handful of messages may differ (a consumer's info, a fetch that ended on its expiry); 300 records never fit
      // in that.
      expect(many[k], `${k}: ${few[k]} messages with 20 ended agents, ${many[k]} with 320`).toBeLessThan(few[k] + 20);
    }
    // And they still tell the truth.
    expect(await reads.budget()).toEqual({ tokens: 130, costUsd: 0 });
    expect((await findInFleet(a.records, 'old-0300'))?.status).toBe('completed');
  });

  it("an agent's kept final usage counts over its live record, which may lag behind its end", async () => {
    const b = hostBus('b');
    const a = hostBus('a');
    // On b: the spender's live record from before its model call (no usage yet), then its end
    // told to the caps (its final usage kept) while the record's own move is still under way.
    expect(
      await b.records.publish(on('spender', { rootId: 'root2', parentId: 'root2', depth: 1, status: 'working' })),
    ).toBe('published');
    await b.caps.ended(ended('spender', 'root2', 2000));
    expect(await a.caps.treeUsageElsewhere('root2')).toEqual({ tokens: 2000, costUsd: 0 });
  });

  it("status --all's read of the other hosts fetches none of this host's own ended agents, however many", async () => {
    const { fleet: c, bus: cBus } = hostFleet('c', 'flat2');
    const { bus: dBus } = hostFleet('d', 'flat2');
    // d runs one agent; c has ended ones of its own, each in its registry and on the bus (as its harnesses left them).
    expect(await dBus.records.publish(on('far-1', { host: 'd', status: 'working' }))).toBe('published');
    const endHere = async (from: number, to: number): Promise<void> => {
      for (let i = from; i < to; i += 32) {
        const batch = Array.from({ length: Math.min(32, to - i) }, (_, k) => {
          const id = `mine-${String(i + k).padStart(4, '0')}`;
          const rec = { ...ended(id, id, 5), host: 'c' };
          createRecord(c.layout, rec);
          return rec;
        });
        expect(await Promise.all(batch.map((r) => cBus.records.publish(r)))).toEqual(batch.map(() => 'published'));
      }
    };
    await endHere(0, 20);
    expect((await cBus.records.others()).map((r) => r.id)).toEqual(['far-1']);
    const few = await sent(() => cBus.records.others());
    await endHere(20, 320);
    const many = await sent(() => cBus.records.others());
    expect(many, `${few} messages with 20 of this host's ended agents on the bus, ${many} with 320`).toBeLessThan(
      few + 20,
    );
    expect((await cBus.records.others()).map((r) => r.id)).toEqual(['far-1']);
  });
});
