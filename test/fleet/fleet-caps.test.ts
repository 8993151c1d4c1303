import { randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { busFor, closeBuses } from '../../src/bus/open.js';
import { defaultConfig } from '../../src/config/schema.js';
import { tempFleet, type TempFleet } from '../helpers/fleet.js';
import { natsServer, type NatsServer } from '../helpers/nats.js';
import { eventually } from '../helpers/tmux.js';
import { startFixture, type Fixture } from './helpers/fixture.js';

// The caps of a fleet spread over two hosts (docs/design.md §5.2, §18): two fleet roots with
// their own FLOTILLA_HOST — each its own host's socket slots and files — sharing one real
// nats-server and one fleet name, so only the bus can keep the caps fleet-wide.
let server: NatsServer;
beforeAll(async () => {
  server = await natsServer();
}, 120_000);
afterAll(async () => {
  await closeBuses();
  await server?.kill();
});

let hosts: { a: TempFleet; b: TempFleet };
let fleetName: string;
const started: Fixture[] = [];
beforeEach(() => {
  hosts = { a: tempFleet('flotilla-host-a-'), b: tempFleet('flotilla-host-b-') };
  fleetName = `caps${randomBytes(4).toString('hex')}`;
});
afterEach(async () => {
  for (const f of started.splice(0)) f.kill('SIGKILL');
  await closeBuses();
  hosts.a.cleanup();
  hosts.b.cleanup();
});

/** A contender on `host`, loaded and waiting for `go` (a file) before it asks the bus. */
function contender(
  host: 'a' | 'b',
  go: string,
  what: 'slot' | 'tree',
  n: number,
  agentId: string,
  rootId = '',
): Fixture {
  const f = startFixture(
    'fleet-caps.mjs',
    [hosts[host].layout.root, server.url, fleetName, what, String(n), agentId, go, rootId],
    { ...process.env, FLOTILLA_HOST: host },
  );
  started.push(f);
  return f;
}

const OUTCOME = /^(held \d+|full|claimed \d+|\[flotilla:.*\])$/;

/** Starts `count` contenders on each host, releases them together, and returns each one's first answer. */
async function race(
  count: number,
  what: 'slot' | 'tree',
  n: number,
  rootId = '',
): Promise<{ f: Fixture; host: 'a' | 'b'; line: string }[]> {
  const go = join(hosts.a.project, `go-${randomBytes(3).toString('hex')}`);
  const all = (['a', 'b'] as const).flatMap((host) =>
    Array.from({ length: count }, (_, i) => ({ host, f: contender(host, go, what, n, `${host}${i}`, rootId) })),
  );
  writeFileSync(go, '');
  return Promise.all(all.map(async (c) => ({ ...c, line: await c.f.waitLine(OUTCOME, 120_000) })));
}

describe('fleet-wide caps on a nats:// bus, two hosts', () => {
  it('20 contenders on two hosts at once against max_running 4: exactly 4 fleet slots held, 16 told the fleet is full', async () => {
    const results = await race(10, 'slot', 4);
    const held = results.filter((r) => r.line.startsWith('held'));
    expect(held).toHaveLength(4);
    expect(results.filter((r) => r.line === 'full')).toHaveLength(16);
    // Four different slots: no slot was granted twice.
    expect(held.map((r) => r.line).sort()).toEqual(['held 0', 'held 1', 'held 2', 'held 3']);
    // The bus's own count agrees, from either host.
    const caps = busFor(hosts.b.layout, { fleet: { ...defaultConfig().fleet, bus: server.url, name: fleetName } }).caps;
    expect(await caps.countSlots(4)).toBe(4);
    // A release gives one back at once, to whichever host asks.
    held[0]!.f.send('release');
    await held[0]!.f.waitLine(/^released$/);
    expect(await caps.countSlots(4)).toBe(3);
    const go = join(hosts.b.project, 'go-again');
    const next = contender('b', go, 'slot', 4, 'b-late');
    writeFileSync(go, '');
    expect(await next.waitLine(OUTCOME)).toBe(held[0]!.line);
  }, 300_000);

  it('a holder SIGKILLed on host a: host b cannot take its slot until the TTL drops it; host a sees its holder dead and takes it back at once', async () => {
    const go = join(hosts.a.project, 'go');
    const holder = contender('a', go, 'slot', 1, 'a-holder');
    // Both contenders load and connect before the kill, so each asks within moments of it.
    const goB = join(hosts.b.project, 'go-b');
    const early = contender('b', goB, 'slot', 1, 'b-early');
    writeFileSync(go, '');
    expect(await holder.waitLine(OUTCOME)).toBe('held 0');
    holder.kill('SIGKILL');
    await holder.exited;
    writeFileSync(goB, '');
    // Another host cannot see that the holder died: its slot stays taken — no extra agent.
    expect(await early.waitLine(OUTCOME)).toBe('full');
    // On the holder's own host the death is visible (pid and start time): the slot comes back at once.
    const goA = join(hosts.a.project, 'go-a');
    const again = contender('a', goA, 'slot', 1, 'a-again');
    writeFileSync(goA, '');
    expect(await again.waitLine(OUTCOME)).toBe('held 0');
  }, 300_000);

  it("a holder SIGKILLed on host a comes back to host b after the slot bucket's TTL", async () => {
    const go = join(hosts.a.project, 'go');
    const holder = contender('a', go, 'slot', 1, 'a-holder');
    writeFileSync(go, '');
    expect(await holder.waitLine(OUTCOME)).toBe('held 0');
    holder.kill('SIGKILL');
    await holder.exited;
    const caps = busFor(hosts.b.layout, { fleet: { ...defaultConfig().fleet, bus: server.url, name: fleetName } }).caps;
    // Nobody renews it now; the bucket's max_age drops it (src/bus/nats/caps.ts SLOT_TTL_MS).
    const slot = await eventually(
      async () => (await caps.takeSlot('b-after', 1)) ?? undefined,
      120_000,
      "the dead holder's slot back on host b",
    );
    expect(slot.index).toBe(0);
    slot.release();
  }, 300_000);

  it('the tree spawn cap is exact across hosts: 12 contenders, max 5 → spawns 0..4 claimed once each, 7 refused', async () => {
    const results = await race(6, 'tree', 5, 'root-xyz');
    const claimed = results
      .filter((r) => r.line.startsWith('claimed'))
      .map((r) => r.line)
      .sort();
    expect(claimed).toEqual(['claimed 0', 'claimed 1', 'claimed 2', 'claimed 3', 'claimed 4']);
    expect(results.filter((r) => r.line === '[flotilla:tree-limit root=root-xyz spawns=5 max=5]')).toHaveLength(7);
    // Both hosts took part in the claims' contest and agree on the count.
    const caps = busFor(hosts.a.layout, { fleet: { ...defaultConfig().fleet, bus: server.url, name: fleetName } }).caps;
    expect(await caps.treeSpawnCount('root-xyz')).toBe(5);
    expect(await caps.treeSpawnCount('root-other')).toBe(0);
  }, 300_000);

  it("a harness adopts only the slot taken for it: another agent's slot or a free one is refused", async () => {
    const caps = busFor(hosts.a.layout, { fleet: { ...defaultConfig().fleet, bus: server.url, name: fleetName } }).caps;
    const mine = (await caps.takeSlot('w-one', 2))!;
    await expect(caps.adoptSlot(mine.index, 'w-two')).rejects.toThrow(`fleet slot ${mine.index} is held by 'w-one'`);
    await expect(caps.adoptSlot(1, 'w-one')).rejects.toThrow('fleet slot 1 is free');
    const adopted = await caps.adoptSlot(mine.index, 'w-one');
    // The spawner's copy stops renewing; releasing it would not free the harness's slot.
    mine.handOver();
    mine.release();
    expect(await caps.countSlots(2)).toBe(1);
    adopted.release();
    await closeBuses();
    expect(
      await busFor(hosts.a.layout, {
        fleet: { ...defaultConfig().fleet, bus: server.url, name: fleetName },
      }).caps.countSlots(2),
    ).toBe(0);
  });

  it('with the nats-server down while slots are held, a new contender gets one line saying the bus is unreachable, never a slot', async () => {
    const go = join(hosts.a.project, 'go');
    const holder = contender('a', go, 'slot', 2, 'a-holder');
    writeFileSync(go, '');
    expect(await holder.waitLine(OUTCOME)).toBe('held 0');
    await server.stop();
    try {
      const goB = join(hosts.b.project, 'go-b');
      const late = contender('b', goB, 'slot', 2, 'b-late');
      writeFileSync(goB, '');
      expect(await late.waitLine(OUTCOME)).toBe(`[flotilla:bus-unreachable bus=${server.url}]`);
      expect(await late.exited).toBe(0);
    } finally {
      await server.start();
    }
    // Back up within the TTL, the holder keeps its slot and the fleet counts it.
    const caps = busFor(hosts.b.layout, { fleet: { ...defaultConfig().fleet, bus: server.url, name: fleetName } }).caps;
    await eventually(async () => (await caps.countSlots(2)) === 1, 60_000, 'the held slot counted after the restart');
  }, 300_000);
});
