import { jetstream } from '@nats-io/jetstream';
import { Kvm } from '@nats-io/kv';
import { connect } from '@nats-io/transport-node';
import { describe, expect, it } from 'vitest';
import { endedKey, parseRecent, recentKey } from '../../src/bus/nats/ended.js';
import { busFor } from '../../src/bus/open.js';
import { DEFAULT_FLEET_SETTINGS } from '../../src/bus/settings.js';
import type { AgentRecord } from '../../src/fleet/record.js';
import { createRecord, readRecord, updateRecord } from '../../src/fleet/registry.js';
import { recordInput } from '../helpers/records.js';
import { natsFleets } from '../helpers/nats-fleets.js';
import type { SpawnFleet } from '../spawn/helpers.js';

/**
 * `status` on a many-host `nats://` fleet reads each other host's window of ended agents from
 * the one key that host keeps, `recent.<host>`, which carries the records themselves
 * (docs/decisions-hosts.md "Records on the bus"): the same rows as a get of each ended key, and
 * never a torn window while a host ends agents as another reads.
 */
describe("other hosts' recent agents on a nats:// bus (real nats-server, four hosts)", { timeout: 300_000 }, () => {
  const nats = natsFleets();
  const host = (fleet: string): SpawnFleet => nats.open(`fleet:\n  bus: ${nats.url()}\n  name: ${fleet}\n`);
  const busOf = (f: SpawnFleet, fleet: string, name: string) =>
    busFor(f.layout, { fleet: { ...DEFAULT_FLEET_SETTINGS, bus: nats.url(), name: fleet, host: name } }).records;
  const t0 = Date.parse('2026-11-20T10:00:00.000Z');
  const ended = (f: SpawnFleet, h: string, i: number): AgentRecord => {
    const at = new Date(t0 + i * 1_000).toISOString();
    return createRecord(
      f.layout,
      recordInput(`${h}-${String(i).padStart(4, '0')}`, {
        host: h,
        status: i % 7 === 0 ? 'failed' : 'completed',
        createdAt: at,
        startedAt: at,
        finishedAt: at,
        lastLine: `${h} finished ${i}`,
      }),
    );
  };
  /** The bucket as the old reader read it: each id the host's list names, got from its ended key. */
  const byEndedKeys = async (fleet: string, h: string, window: number): Promise<unknown[]> => {
    const nc = await connect({ servers: nats.url() });
    try {
      const kv = await new Kvm(jetstream(nc)).open(`FLOTILLA_${fleet}_RECORDS`);
      const list = parseRecent((await kv.get(recentKey(h)))!.value)!;
      const out: unknown[] = [];
      for (const x of list.last.slice(0, window)) {
        const e = await kv.get(endedKey(x.id));
        out.push(JSON.parse(new TextDecoder().decode(e!.value)));
      }
      return out;
    } finally {
      await nc.close();
    }
  };

  it("lists each host's last 100 to end as a get of each ended key would, and status prints them under their host", async () => {
    const fleet = 'many';
    const a = host(fleet);
    const others = ['b', 'c', 'd'].map((h, n) => ({ h, f: host(fleet), count: [40, 130, 101][n]! }));
    for (const { h, f, count } of others) {
      const bus = busOf(f, fleet, h);
      for (let i = 0; i < count; i++) ended(f, h, i);
      // One of each host's agents still live, so the window sits beside a live key.
      createRecord(
        f.layout,
        recordInput(`${h}-live`, { host: h, status: 'idle', createdAt: new Date(t0).toISOString() }),
      );
      expect(new Set(await Promise.all(f.records().map((r) => bus.publish(r))))).toEqual(new Set(['published']));
      await bus.beat();
    }
    const recent = await busOf(a, fleet, 'a').recent(100);
    for (const { h, count } of others) {
      const mine = recent.records.filter((r) => r.host === h);
      const endedHere = mine.filter((r) => r.id !== `${h}-live`);
      // Newest first in the list: the window is the last min(count, 100) to end, each exactly as its ended key has it.
      const expected = await byEndedKeys(fleet, h, 100);
      expect(endedHere.map((r) => r.id).sort()).toEqual((expected as AgentRecord[]).map((r) => r.id).sort());
      for (const r of endedHere) expect(r).toEqual(expected.find((e) => (e as AgentRecord).id === r.id));
      expect(endedHere).toHaveLength(Math.min(count, 100));
      expect(mine.some((r) => r.id === `${h}-live` && r.status === 'idle')).toBe(true);
      expect(recent.more[h]).toBe(Math.max(0, count - 100));
    }
    const s = await a.flotilla(['status'], { FLOTILLA_HOST: 'a' });
    expect(s.exitCode, s.stderr).toBe(0);
    for (const { h, count } of others) {
      const section = s.stdout.slice(s.stdout.indexOf(`Host ${h} `)).split('\nHost ')[0]!;
      const rows = section.split('\n').filter((l) => new RegExp(`^ *${h}-\\d{4} `).test(l));
      expect(rows).toHaveLength(Math.min(count, 100));
      expect(section).toMatch(
        new RegExp(`^${h}-${String(count - 1).padStart(4, '0')} +(completed|failed) .*${h} finished ${count - 1}`, 'm'),
      );
      if (count > 100) {
        expect(section).toContain(`… ${count - 100} finished on ${h} — flotilla status --all`);
        expect(section).not.toMatch(new RegExp(`^${h}-0000 `, 'm'));
      }
    }
    // --all: every agent of every host, the ones past the window got from their ended keys.
    const all = await a.flotilla(['status', '--all'], { FLOTILLA_HOST: 'a' });
    for (const { h, count } of others)
      for (const i of [0, count - 1])
        expect(all.stdout).toMatch(new RegExp(`^${h}-${String(i).padStart(4, '0')} `, 'm'));
    expect(all.stdout).not.toContain('finished on');
  });

  it('a host ending agents while another reads: every read is a whole window, each record as it ended', async () => {
    const fleet = 'racing';
    const a = host(fleet);
    const b = host(fleet);
    const fromB = busOf(b, fleet, 'b');
    const fromA = busOf(a, fleet, 'a');
    const total = 60;
    // b's agents, live on the bus first; then each ends in turn while a reads.
    for (let i = 0; i < total; i++)
      createRecord(
        b.layout,
        recordInput(`b-${String(i).padStart(4, '0')}`, {
          host: 'b',
          status: 'working',
          createdAt: new Date(t0 + i * 1_000).toISOString(),
        }),
      );
    for (const r of b.records()) expect(await fromB.publish(r)).toBe('published');
    let writing = true;
    const writer = (async () => {
      for (let i = 0; i < total; i++) {
        const id = `b-${String(i).padStart(4, '0')}`;
        const at = new Date(t0 + 100_000 + i * 1_000).toISOString();
        updateRecord(b.layout, id, { status: 'completed', finishedAt: at, lastLine: `ended ${i}` });
        expect(await fromB.publish(readRecord(b.layout, id)!)).toBe('published');
      }
      writing = false;
    })();
    let reads = 0;
    while (writing) {
      const got = await fromA.recent(100);
      reads++;
      const done = got.records.filter((r) => r.host === 'b' && r.status === 'completed');
      // The window is whole: b's agents end in order, so the ended ones read are the first k, each once, each
      // exactly as it ended (no older copy, no half-written list).
      const ids = done.map((r) => r.id).sort();
      expect(ids).toEqual(Array.from({ length: ids.length }, (_, i) => `b-${String(i).padStart(4, '0')}`));
      for (const r of done)
        expect(r).toMatchObject({
          lastLine: `ended ${Number(r.id.slice(2))}`,
          finishedAt: new Date(t0 + 100_000 + Number(r.id.slice(2)) * 1_000).toISOString(),
        });
      expect(got.more.b ?? 0).toBe(0);
    }
    await writer;
    expect(reads).toBeGreaterThan(1);
    const after = await fromA.recent(100);
    const mine = after.records.filter((r) => r.host === 'b');
    expect(mine).toHaveLength(total);
    expect(mine.every((r) => r.status === 'completed')).toBe(true);
    expect(after.more.b).toBe(0);
    expect(mine.sort((x, y) => x.id.localeCompare(y.id))).toEqual(
      ((await byEndedKeys(fleet, 'b', 100)) as AgentRecord[]).sort((x, y) => x.id.localeCompare(y.id)),
    );
  });
});
