import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { busFor, closeBuses, type Bus } from '../../src/bus/open.js';
import { DEFAULT_FLEET_SETTINGS } from '../../src/bus/settings.js';
import { createRecord, updateRecord } from '../../src/fleet/registry.js';
import { recordInput } from '../helpers/records.js';
import { natsServer, type NatsServer } from '../helpers/nats.js';
import { eventually } from '../helpers/tmux.js';
import { spawnFleet, type SpawnFleet } from '../spawn/helpers.js';

/**
 * Records across hosts on a `nats://` bus (docs/design.md §18): two fleet roots on one
 * machine that call themselves `a` and `b` (FLOTILLA_HOST) and share a real nats-server as
 * one fleet. What runs on b is seen from a — its host, its state, its end — though a's
 * registry never holds it.
 */
describe('records on the bus (real nats-server, two hosts by name)', { timeout: 300_000 }, () => {
  let server: NatsServer;
  const fleets: SpawnFleet[] = [];
  beforeAll(async () => {
    server = await natsServer();
  }, 120_000);
  afterAll(async () => {
    await server.kill();
  });
  afterEach(async () => {
    await closeBuses();
    for (const f of fleets.splice(0)) await f.close();
  });

  const onBus = (name: string) => `fleet:\n  bus: ${server.url}\n  name: ${name}\n`;
  const host = (fleet: string): SpawnFleet => {
    const f = spawnFleet({ config: onBus(fleet), definitions: { worker: 'worker.yaml' } });
    fleets.push(f);
    return f;
  };
  // Host a's view, as its status would read it.
  const viewFrom = (f: SpawnFleet, fleet: string): Bus =>
    busFor(f.layout, { fleet: { ...DEFAULT_FLEET_SETTINGS, bus: server.url, name: fleet, host: 'a' } });

  it("an agent spawned on b is seen from a with host 'b', through its work to its end", async () => {
    const a = host('one');
    const b = host('one');
    const B = { FLOTILLA_HOST: 'b' };
    const once = await b.spawnAgent(['--oneshot', '--agent', 'worker', '--id', 'far-once', 'work'], B);
    expect(once.exitCode).toBe(0);
    const stays = await b.spawnAgent(['--agent', 'worker', '--id', 'far-stays', 'work'], B);
    expect(stays.exitCode).toBe(0);
    expect(b.record('far-once').host).toBe('b');

    const bus = viewFrom(a, 'one');
    // Its end, as the other host wrote it: the oneshot completed with its two turns.
    const done = await eventually(
      async () => {
        const r = await bus.records.get('far-once');
        return r?.status === 'completed' && r;
      },
      90_000,
      "b's oneshot agent completed, seen from a",
    );
    expect(done).toMatchObject({ id: 'far-once', host: 'b', turns: 2, parentId: null });
    await eventually(
      async () => (await bus.records.get('far-stays'))?.status === 'idle',
      90_000,
      "b's persistent agent idle, seen from a",
    );
    // a's registry holds none of them; its list shows both, each with its host.
    expect(a.records()).toEqual([]);
    const all = await bus.records.list();
    expect(all.map((r) => [r.id, r.host])).toEqual([
      ['far-once', 'b'],
      ['far-stays', 'b'],
    ]);
    // b beats: a hears it, and b is not lost.
    const beats = await bus.records.hosts();
    expect(beats.find((h) => h.host === 'b')).toMatchObject({ host: 'b', lost: false, self: false });

    // A write by a process that has no bus (a hook, an approval) reaches a within a heartbeat.
    updateRecord(b.layout, 'far-stays', { lastLine: 'written beside the harness' });
    await eventually(
      async () => (await bus.records.get('far-stays'))?.lastLine === 'written beside the harness',
      60_000,
      'the write beside the harness, seen from a',
    );
    // And its end by cancel on b.
    expect((await b.flotilla(['cancel', 'far-stays'], B)).exitCode).toBe(0);
    await eventually(
      async () => (await bus.records.get('far-stays'))?.status === 'cancelled',
      60_000,
      "b's cancelled agent, seen from a",
    );
  });

  it("status on a shows b's agents under b's heading with its heartbeat, and --json has a host row and b's records", async () => {
    const a = host('five');
    const b = host('five');
    expect(
      (await b.spawnAgent(['--agent', 'worker', '--id', 'shown-1', 'work'], { FLOTILLA_HOST: 'b' })).exitCode,
    ).toBe(0);
    const A = { FLOTILLA_HOST: 'a' };
    let last = '';
    const text = await eventually(
      async () => {
        const s = await a.flotilla(['status'], A);
        last = s.stdout + s.stderr;
        return s.exitCode === 0 && /Host b — heartbeat \d+ s ago\n[^\n]*\nshown-1 +idle/.test(s.stdout) && s.stdout;
      },
      90_000,
      "b's idle agent under b's heading in a's status",
    ).catch((err: unknown) => {
      throw new Error(`${String(err)}\n${last}`);
    });
    expect(text.startsWith('Host a (this machine)\nNo agents.')).toBe(true);
    expect(text).toMatch(/Bus: reachable/);
    // Each status is one read of the bus, with its 5 s limit: on a loaded machine one may come back with this host's
    // alone.
    type Row = { id: string; status: string; host?: string; lost?: boolean };
    const json = await eventually(
      async () => {
        const rows = JSON.parse((await a.flotilla(['status', '--json'], A)).stdout) as Row[];
        return rows.some((e) => e.id === 'host:b') && rows;
      },
      90_000,
      "b's host row in a's status --json",
    );
    expect(json.find((e) => e.id === 'host:b')).toMatchObject({ status: 'host', host: 'b', lost: false });
    expect(json.find((e) => e.id === 'shown-1')).toMatchObject({ host: 'b', status: 'idle' });
    // On b itself, its agent is in its own tree, under its own heading.
    const onB = await b.flotilla(['status'], { FLOTILLA_HOST: 'b' });
    expect(onB.stdout).toMatch(/^Host b \(this machine\)\n[^\n]*\nshown-1 +idle/);
  });

  it("status windows another host's history as its own: b's live agent and the 100 that ended last, then how many more; --all lists every one", async () => {
    const a = host('window');
    const b = host('window');
    // b's history as its registry keeps it, each record mirrored by b onto the bus.
    const fromB = busFor(b.layout, {
      fleet: { ...DEFAULT_FLEET_SETTINGS, bus: server.url, name: 'window', host: 'b' },
    }).records;
    const t0 = Date.parse('2026-11-20T10:00:00.000Z');
    for (let i = 0; i < 103; i++) {
      const at = new Date(t0 + i * 60_000).toISOString();
      createRecord(
        b.layout,
        recordInput(`old-${String(i).padStart(3, '0')}`, {
          host: 'b',
          status: 'completed',
          createdAt: at,
          startedAt: at,
          finishedAt: at,
        }),
      );
    }
    createRecord(
      b.layout,
      recordInput('live-one', { host: 'b', status: 'idle', createdAt: new Date(t0).toISOString() }),
    );
    // Published all at once, as many of b's processes ending agents together would: each counted once.
    expect(new Set(await Promise.all(b.records().map((rec) => fromB.publish(rec))))).toEqual(new Set(['published']));
    await fromB.beat();
    // What a reader of live agents reads: b's one live record, never its history (docs/decisions-hosts.md "Records on
    // the bus").
    const fromA = viewFrom(a, 'window').records;
    expect((await fromA.live()).map((r) => r.id)).toEqual(['live-one']);
    const recent = await fromA.recent(100);
    expect(recent.records).toHaveLength(101);
    expect(recent.more).toEqual({ b: 3 });
    // An agent that ended long ago is still found by id, as wait, output and status ID find it.
    expect(await fromA.get('old-000')).toMatchObject({ id: 'old-000', host: 'b', status: 'completed' });
    const A = { FLOTILLA_HOST: 'a' };
    const s = await a.flotilla(['status'], A);
    expect(s.exitCode, s.stderr).toBe(0);
    const shown = (id: string) => new RegExp(`^${id} `, 'm').test(s.stdout);
    expect(shown('live-one')).toBe(true);
    // The three that ended first are left out, the 100 after them shown.
    for (const i of [0, 1, 2]) expect(shown(`old-00${i}`)).toBe(false);
    for (const i of ['003', '050', '102']) expect(shown(`old-${i}`)).toBe(true);
    expect(s.stdout).toContain('… 3 finished on b — flotilla status --all');
    const json = JSON.parse((await a.flotilla(['status', '--json'], A)).stdout) as { id: string; host?: string }[];
    expect(json.filter((e) => e.host === 'b' && e.id !== 'host:b')).toHaveLength(101);
    const all = await a.flotilla(['status', '--all'], A);
    expect(all.stdout).toMatch(/^old-000 /m);
    expect(all.stdout).not.toContain('finished on b');
  });

  it("each host's person has their own inbox: a root's completion on b reaches b's person, never a's, though a's status collects person mail", async () => {
    const a = host('six');
    const b = host('six');
    const A = { FLOTILLA_HOST: 'a' };
    const B = { FLOTILLA_HOST: 'b' };
    // a's person looks first: a's consumer of person mail exists before b's root ends.
    expect((await a.flotilla(['status'], A)).exitCode).toBe(0);
    const done = await b.spawnAgent(['--oneshot', '--wait', '--agent', 'worker', '--id', 'b-root', 'work'], B);
    expect(done.exitCode, done.stderr).toBe(0);
    // Both look again; only b's person gets it.
    expect((await a.flotilla(['status'], A)).exitCode).toBe(0);
    await eventually(
      async () => {
        await b.flotilla(['status'], B);
        return b.mail('human').some((m) => m.kind === 'completion' && m.from === 'b-root');
      },
      60_000,
      "b-root's completion in b's person's inbox",
    );
    expect((await a.flotilla(['status'], A)).exitCode).toBe(0);
    expect(a.mail('human')).toEqual([]);
    expect(b.mail('human').filter((m) => m.from === 'b-root')).toHaveLength(1);
  });

  it('a bus outage longer than lost_after_secs marks nothing lost: a host is called silent only over a window in which the reader heard the bus', async () => {
    const onBusLost = (fleet: string) => `${onBus(fleet)}  lost_after_secs: 10\n`;
    const a = spawnFleet({ config: onBusLost('seven'), definitions: { worker: 'worker.yaml' } });
    const b = spawnFleet({ config: onBusLost('seven'), definitions: { worker: 'worker.yaml' } });
    fleets.push(a, b);
    const A = { FLOTILLA_HOST: 'a' };
    const B = { FLOTILLA_HOST: 'b' };
    // A live agent on each host: a's harness beats for a, and looks for silent hosts after each beat.
    expect((await a.spawnAgent(['--agent', 'worker', '--id', 'a-live', 'work'], A)).exitCode).toBe(0);
    expect((await b.spawnAgent(['--agent', 'worker', '--id', 'b-live', 'work'], B)).exitCode).toBe(0);
    await eventually(
      () => a.record('a-live').status === 'idle' && b.record('b-live').status === 'idle',
      90_000,
      'both agents idle',
    );
    const bus = viewFrom(a, 'seven');
    // b cannot beat the moment the bus returns: its harness and tmux server are stopped
    // (tmux would wake a stopped pane) until a has beaten again.
    const bServer = Number((await b.tmux.tmux('display-message', '-p', '#{pid}')).trim());
    const bPid = b.record('b-live').pid!;
    process.kill(bServer, 'SIGSTOP');
    process.kill(bPid, 'SIGSTOP');
    try {
      await server.stop();
      // Longer than lost_after_secs: every host's last beat is old once the bus is back.
      await new Promise((r) => setTimeout(r, 13_000));
      await server.start();
      await eventually(
        async () => ((await bus.records.hosts()).find((h) => h.host === 'a')?.ageMs ?? Infinity) < 2_500,
        60_000,
        'a beating again',
      );
      // a's harness has beaten (and looked) at least once since the bus returned, with b's last beat older than the
      // limit.
      await new Promise((r) => setTimeout(r, 2_500));
    } finally {
      process.kill(bPid, 'SIGCONT');
      process.kill(bServer, 'SIGCONT');
    }
    await eventually(
      async () => ((await bus.records.hosts()).find((h) => h.host === 'b')?.ageMs ?? Infinity) < 2_500,
      60_000,
      'b beating again',
    );
    expect((await bus.records.get('b-live'))?.status).toBe('idle');
    expect(b.record('b-live').status).toBe('idle');
    expect(b.mail('human').filter((m) => m.kind === 'completion' && m.status === 'lost')).toEqual([]);
    expect(a.mail('human').filter((m) => m.kind === 'completion' && m.status === 'lost')).toEqual([]);
  });

  it('another fleet on the same server sees none of it; an unknown id is undefined', async () => {
    const b = host('two');
    const other = host('three');
    expect(
      (await b.spawnAgent(['--oneshot', '--agent', 'worker', '--id', 'mine-1', 'work'], { FLOTILLA_HOST: 'b' }))
        .exitCode,
    ).toBe(0);
    const mine = viewFrom(fleets[0]!, 'two');
    await eventually(
      async () => (await mine.records.get('mine-1'))?.status === 'completed',
      90_000,
      'the agent seen by its own fleet',
    );
    const theirs = viewFrom(other, 'three');
    expect(await theirs.records.get('mine-1')).toBeUndefined();
    expect(await theirs.records.list()).toEqual([]);
    expect(await mine.records.get('no-such-agent')).toBeUndefined();
  });

  it('the bus away: get and list answer from this host alone, and a record written meanwhile reaches the bus once it is back', async () => {
    const b = host('four');
    const a = host('four');
    const bus = viewFrom(a, 'four');
    expect((await b.spawnAgent(['--agent', 'worker', '--id', 'kept-1', 'work'], { FLOTILLA_HOST: 'b' })).exitCode).toBe(
      0,
    );
    await eventually(
      async () => (await bus.records.get('kept-1'))?.status === 'idle',
      90_000,
      'the agent idle, seen from a',
    );
    await server.stop();
    try {
      updateRecord(b.layout, 'kept-1', { lastLine: 'while the bus was away' });
      // A reader without the bus still answers (what it can see), and does not hang.
      expect((await bus.records.list()).map((r) => r.id)).toEqual([]);
      expect(await bus.records.get('kept-1')).toBeUndefined();
    } finally {
      await server.start();
    }
    await eventually(
      async () => (await bus.records.get('kept-1'))?.lastLine === 'while the bus was away',
      90_000,
      'the write made while the bus was away, seen from a',
    );
  });
});
