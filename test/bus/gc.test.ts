import { jetstreamManager } from '@nats-io/jetstream';
import { connect } from '@nats-io/transport-node';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { busFor, closeBuses, type Bus } from '../../src/bus/open.js';
import { DEFAULT_FLEET_SETTINGS } from '../../src/bus/settings.js';
import { defaultConfig, type Config } from '../../src/config/schema.js';
import { createRecord, overwriteRecord, readRecord } from '../../src/fleet/registry.js';
import type { AgentRecord } from '../../src/fleet/record.js';
import { gcFleet } from '../../src/lifecycle/gc.js';
import { recordInput } from '../helpers/records.js';
import { natsServer, type NatsServer } from '../helpers/nats.js';
import { eventually } from '../helpers/tmux.js';
import { spawnFleet, type SpawnFleet } from '../spawn/helpers.js';

/**
 * `flotilla gc` on a `nats://` bus (docs/scale-out.md "What gc removes from the bus"): two
 * fleet roots on one machine call themselves `a` and `b` and share a real nats-server as one
 * fleet. What b's gc removes from its registry leaves the bus too, so a's `status --all` no
 * longer lists it; a tree's keys go once nothing of the tree is left on any host.
 */
describe('gc on the bus (real nats-server, two hosts by name)', { timeout: 300_000 }, () => {
  let server: NatsServer;
  const fleets: SpawnFleet[] = [];
  const servers: NatsServer[] = [];
  beforeAll(async () => {
    server = await natsServer();
  }, 120_000);
  afterAll(async () => {
    await server.kill();
  });
  afterEach(async () => {
    await closeBuses();
    for (const f of fleets.splice(0)) await f.close();
    for (const s of servers.splice(0)) await s.kill();
  });

  const host = (fleet: string, url = server.url): SpawnFleet => {
    const f = spawnFleet({
      config: `fleet:\n  bus: ${url}\n  name: ${fleet}\n`,
      definitions: { worker: 'worker.yaml' },
    });
    fleets.push(f);
    return f;
  };
  const fleetOf = (fleet: string, self: string, url = server.url): Config['fleet'] => ({
    ...DEFAULT_FLEET_SETTINGS,
    bus: url,
    name: fleet,
    host: self,
  });
  const busOf = (f: SpawnFleet, fleet: string, self: string, url = server.url): Bus =>
    busFor(f.layout, { fleet: fleetOf(fleet, self, url) });
  const A = { FLOTILLA_HOST: 'a' };
  const B = { FLOTILLA_HOST: 'b' };
  const ago = (ms: number) => new Date(Date.now() - ms).toISOString();
  /** An agent of `self` that finished `ms` ago, in `f`'s registry and (once its put is acknowledged) on the bus. */
  const ended = async (
    f: SpawnFleet,
    bus: Bus,
    id: string,
    self: string,
    ms: number,
    over: Partial<AgentRecord> = {},
  ) => {
    const rec = createRecord(
      f.layout,
      recordInput(id, {
        host: self,
        status: 'completed',
        createdAt: ago(ms + 60_000),
        startedAt: ago(ms + 60_000),
        finishedAt: ago(ms),
        ...over,
      }),
    );
    expect(await bus.records.publish(rec)).toBe('published');
    return rec;
  };

  /** Every subject the stream of a KV bucket holds a message on: its keys, and any tombstone left. */
  const subjects = async (bucket: string, url = server.url): Promise<string[]> => {
    const nc = await connect({ servers: url });
    try {
      const jsm = await jetstreamManager(nc);
      const info = await jsm.streams.info(`KV_${bucket}`, { subjects_filter: '>' });
      return Object.keys(info.state.subjects ?? {})
        .map((s) => s.slice(`$KV.${bucket}.`.length))
        .sort();
    } finally {
      await nc.close();
    }
  };

  it("gc on b removes its old ended record from the bus: a's status --all and --json --all no longer list it, b's younger and live ones stay", async () => {
    const a = host('gc-one');
    const b = host('gc-one');
    const fromB = busOf(b, 'gc-one', 'b');
    expect((await b.spawnAgent(['--agent', 'worker', '--id', 'gc-live', 'work'], B)).exitCode).toBe(0);
    await eventually(() => b.record('gc-live').status === 'idle', 90_000, "b's agent idle");
    await ended(b, fromB, 'gc-old', 'b', 2 * 3600_000);
    await ended(b, fromB, 'gc-young', 'b', 60_000);
    // a's own ended record is a's gc's to remove, never b's; so is one of another project's fleet root on b (same host
    // name).
    await ended(a, busOf(a, 'gc-one', 'a'), 'gc-mine', 'a', 2 * 3600_000);
    const b2 = host('gc-one');
    await ended(b2, busOf(b2, 'gc-one', 'b'), 'gc-beside', 'b', 2 * 3600_000);
    const listed = async (args: string[]) => {
      const s = await a.flotilla(args, A);
      // Each status is one read of the bus with its 5 s limit: on a loaded machine one may come back with a's alone.
      return s.exitCode === 0 && /^gc-live /m.test(s.stdout) && s.stdout;
    };
    expect(await eventually(() => listed(['status', '--all']), 90_000, "b's agents in a's status --all")).toMatch(
      /^gc-old /m,
    );

    const gc = await b.flotilla(['gc', '--older-than', '3600'], B);
    expect(gc.exitCode, gc.stderr).toBe(0);
    expect(gc.stdout).toContain('removed 1 records');
    expect(gc.stdout).toContain(`removed from the bus ${server.url}: 1 ended records`);
    expect(gc.stderr).toBe('');

    const text = await eventually(() => listed(['status', '--all']), 90_000, "b's live agent in a's status --all");
    expect(text).not.toMatch(/^gc-old /m);
    expect(text).toMatch(/^gc-young /m);
    expect(text).toMatch(/^gc-mine /m);
    expect(text).toMatch(/^gc-beside /m);
    type Row = { id: string; host?: string };
    const rows = await eventually(
      async () => {
        const r = JSON.parse((await a.flotilla(['status', '--json', '--all'], A)).stdout) as Row[];
        return r.some((e) => e.id === 'gc-live') && r;
      },
      90_000,
      "b's live agent in a's status --json --all",
    );
    expect(
      rows
        .filter((e) => e.host === 'b' && e.id !== 'host:b')
        .map((e) => e.id)
        .sort(),
    ).toEqual(['gc-beside', 'gc-live', 'gc-young']);
    // Read back: no key and no tombstone of it; b's list of ended records names the younger one alone, and counts it
    // alone.
    const keys = await subjects('FLOTILLA_gc-one_RECORDS');
    expect(keys.filter((k) => k.includes('gc-old'))).toEqual([]);
    expect(keys).toEqual(expect.arrayContaining(['ended.gc-young', 'ended.gc-mine', 'ended.gc-beside', 'gc-live']));
    const recent = await busOf(a, 'gc-one', 'a').records.recent(100);
    expect(recent.records.map((r) => r.id).sort()).toEqual(['gc-beside', 'gc-live', 'gc-young']);
    expect(recent.more).toEqual({ b: 0 });
  });

  it("a tree's spawn numbers and kept usage leave the bus only once no host has a record of the tree", async () => {
    const a = host('gc-two');
    const b = host('gc-two');
    const fromA = busOf(a, 'gc-two', 'a');
    const fromB = busOf(b, 'gc-two', 'b');
    // The root ended on b long ago; its child, on a, a moment ago. Each spawn took a number of the tree; each end kept
    // its usage.
    const root = await ended(b, fromB, 't-root', 'b', 2 * 3600_000);
    const kid = await ended(a, fromA, 't-kid', 'a', 1_000, { rootId: 't-root', parentId: 't-root', depth: 1 });
    expect(await fromB.caps.claimTreeSpawn('t-root', 10, 't-root')).toBe(0);
    expect(await fromB.caps.claimTreeSpawn('t-root', 10, 't-kid')).toBe(1);
    // A place of the root's taken for a child whose spawn never got as far as a record.
    await fromB.caps.claimChild('t-root', 3, 't-ghost');
    await fromB.caps.ended(root);
    await fromA.caps.ended(kid);
    const config = (self: string): Config => ({ ...defaultConfig(), fleet: fleetOf('gc-two', self) });
    // Past the grace a spawner has between taking a number and putting its child's record on the bus.
    const later = Date.now() + 120_000;

    const onB = await gcFleet(b.layout, config('b'), { olderThanMs: 3600_000, now: later });
    expect(onB.bus).toMatchObject({ skipped: null, records: ['t-root'], trees: [] });
    // a's child still belongs to the tree: its numbers stay, as the next spawn in it counts them.
    expect(await fromA.caps.treeSpawnCount('t-root')).toBe(2);
    expect((await subjects('FLOTILLA_gc-two_TREES')).filter((k) => k.startsWith('usage.t-root.'))).toHaveLength(2);

    const onA = await gcFleet(a.layout, config('a'), { olderThanMs: 0, now: later });
    expect(onA.bus).toMatchObject({ skipped: null, records: ['t-kid'], trees: ['t-root'] });
    expect(await fromA.caps.treeSpawnCount('t-root')).toBe(0);
    expect(await subjects('FLOTILLA_gc-two_TREES')).toEqual([]);
    expect(await subjects('FLOTILLA_gc-two_RECORDS')).toEqual(['recent.a', 'recent.b']);
  });

  it('gc with the bus down does its local work and warns in one line; run again with the bus back, it removes what the first run could not', async () => {
    const own = await natsServer();
    servers.push(own);
    const b = host('gc-three', own.url);
    const fromB = busOf(b, 'gc-three', 'b', own.url);
    await ended(b, fromB, 'down-old', 'b', 2 * 3600_000);
    await closeBuses();
    await own.stop();

    const down = await b.flotilla(['gc'], B);
    expect(down.exitCode, down.stderr).toBe(0);
    expect(down.stdout).toContain('removed 1 records');
    expect(readRecord(b.layout, 'down-old')).toBeUndefined();
    const warning = down.stderr.trim().split('\n');
    expect(warning).toHaveLength(1);
    expect(warning[0]).toMatch(
      new RegExp(
        `^flotilla: warning: gc skipped the bus, nothing was removed from it: cannot reach the bus ${own.url}: .+; run flotilla gc again when the bus is back$`,
      ),
    );

    await own.start();
    const again = await b.flotilla(['gc', '--json'], B);
    expect(again.exitCode, again.stderr).toBe(0);
    expect((JSON.parse(again.stdout) as { bus: unknown }).bus).toEqual({
      url: own.url,
      skipped: null,
      records: ['down-old'],
      trees: [],
      markers: 0,
    });
    expect(await busOf(b, 'gc-three', 'a', own.url).records.get('down-old')).toBeUndefined();
    expect((await subjects('FLOTILLA_gc-three_RECORDS', own.url)).filter((k) => k.includes('down-old'))).toEqual([]);
  });

  it('a record another process writes and publishes again while gc runs stays on the bus as written; one nobody touches goes', async () => {
    const a = host('gc-four');
    const b = host('gc-four');
    const fromB = busOf(b, 'gc-four', 'b');
    const kept = await ended(b, fromB, 'rp-again', 'b', 2 * 3600_000);
    await ended(b, fromB, 'rp-plain', 'b', 2 * 3600_000);
    // b's gc is a process of its own. The moment it has taken rp-again out of b's registry, this
    // process writes the record again and publishes it (as a late hook or a reaper would), while
    // that gc goes on to the bus.
    let exited = false;
    const gc = b.flotilla(['gc'], B).finally(() => {
      exited = true;
    });
    while (!exited && readRecord(b.layout, 'rp-again')) await new Promise((r) => setImmediate(r));
    expect(exited).toBe(false);
    const again = overwriteRecord(b.layout, { ...kept, lastLine: 'written again' });
    expect(await fromB.records.publish(again)).toBe('published');
    const done = await gc;
    expect(done.exitCode, done.stderr).toBe(0);
    // What b's registry holds, the bus holds; the untouched one is gone.
    expect(readRecord(b.layout, 'rp-again')).toEqual(again);
    const fromA = busOf(a, 'gc-four', 'a');
    expect(await fromA.records.get('rp-again')).toEqual(again);
    expect(await fromA.records.get('rp-plain')).toBeUndefined();
  });
});
