import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { natsServer, type NatsServer } from '../helpers/nats.js';
import { eventually } from '../helpers/tmux.js';
import { fixture, isAlive, spawnFleet, type SpawnFleet } from './helpers.js';

// One fleet on two hosts (docs/design.md §5.3, §18): two projects, each its own fleet root,
// tmux server, HOME and FLOTILLA_HOST — so each host's socket slots are its own — sharing one
// real nats-server and one fleet name. Only the bus can keep max_running fleet-wide.
let server: NatsServer;
beforeAll(async () => {
  server = await natsServer();
}, 120_000);
afterAll(async () => {
  await server?.kill();
});

let hosts: SpawnFleet[] = [];
afterEach(async () => {
  await Promise.all(hosts.map((h) => h.close()));
  hosts = [];
});

describe('max_running across two hosts on a nats:// bus', () => {
  it("10 spawns on each host at once against max_running 4: exactly 4 agents run fleet-wide, 16 refused; a SIGKILLed holder's slot stays taken for the other host and comes back at once on its own", async () => {
    const [a, b] = (hosts = [spawnFleet(), spawnFleet()]);
    const envOf = (host: string) => ({
      FLOTILLA_LIMITS_MAX_RUNNING: '4',
      FLOTILLA_FLEET_BUS: server.url,
      FLOTILLA_FLEET_NAME: 'race',
      FLOTILLA_HOST: host,
    });
    // Slots count work (§5.2): each child keeps working (a long sleep), so it keeps its slot.
    const args = (id: string) => ['--id', id, '--model', `script:${fixture('sleeper.yaml')}`, 'keep working'];
    const spawns = [a!, b!].flatMap((f, h) =>
      Array.from({ length: 10 }, (_, i) =>
        f.spawnAgent(args(`${'ab'[h]}${i}`), envOf('ab'[h]!)).then((r) => ({ f, r })),
      ),
    );
    const results = await Promise.all(spawns);
    const ok = results.filter(({ r }) => r.exitCode === 0);
    const refused = results.filter(({ r }) => r.exitCode === 1);
    expect(ok).toHaveLength(4);
    expect(refused).toHaveLength(16);
    for (const { r } of refused) expect(r.stderr).toMatch(/^\[flotilla:concurrency-limit running=4 max=4\]$/m);
    // What the person sees on both hosts together: four windows, four harnesses working.
    expect((await a!.windows()).length + (await b!.windows()).length).toBe(4);
    const running = await eventually(
      () => {
        const live = [...a!.records(), ...b!.records()].filter((r) => r.pid && isAlive(r.pid));
        return live.length >= 4 && live;
      },
      60_000,
      'four running harnesses on the two hosts',
    );
    expect(running).toHaveLength(4);
    const victim = running[0]!;
    const onA = a!.records().some((r) => r.id === victim.id);
    const [victimHost, otherHost] = onA ? [a!, b!] : [b!, a!];
    const [victimName, otherName] = onA ? ['a', 'b'] : ['b', 'a'];
    process.kill(victim.pid!, 'SIGKILL');
    await eventually(() => !isAlive(victim.pid!), 30_000, 'the killed harness to die');
    // The other host cannot see that death: the slot stays taken (until the bus's TTL) — no fifth agent.
    const early = await otherHost.spawnAgent(args(`${otherName}-early`), envOf(otherName));
    expect(early.exitCode).toBe(1);
    expect(early.stderr).toMatch(/^\[flotilla:concurrency-limit running=4 max=4\]$/m);
    // Its own host sees it dead and takes the slot back at once.
    const again = await victimHost.spawnAgent(args(`${victimName}-again`), envOf(victimName));
    expect(again.stderr).toBe('');
    expect(again.exitCode).toBe(0);
    // Four run again, fleet-wide: the new one in the dead one's place.
    const after = await eventually(
      () => {
        const live = [...a!.records(), ...b!.records()].filter((r) => r.pid && isAlive(r.pid));
        return live.some((r) => r.id === `${victimName}-again`) && live;
      },
      60_000,
      'the new agent running',
    );
    expect(after).toHaveLength(4);
  }, 600_000);

  it('with the nats-server down, spawn-agent is refused with one line saying the bus is unreachable: no window, no record, no agent', async () => {
    const [a] = (hosts = [spawnFleet()]);
    const env = {
      FLOTILLA_LIMITS_MAX_RUNNING: '4',
      FLOTILLA_FLEET_BUS: server.url,
      FLOTILLA_FLEET_NAME: 'down',
      FLOTILLA_HOST: 'a',
    };
    const args = (id: string) => ['--id', id, '--model', `script:${fixture('sleeper.yaml')}`, 'keep working'];
    expect((await a!.spawnAgent(args('up-1'), env)).exitCode).toBe(0);
    await server.stop();
    try {
      const r = await a!.spawnAgent(args('down-1'), env);
      expect(r.exitCode).toBe(1);
      expect(r.stderr).toMatch(
        new RegExp(
          `^flotilla: spawn refused: the bus ${server.url} is unreachable, so the fleet's caps cannot be checked \\(.*\\) — start it \\(nats-server -js\\) or check fleet\\.bus$`,
          'm',
        ),
      );
      expect(r.stderr).toMatch(new RegExp(`^\\[flotilla:bus-unreachable bus=${server.url}\\]$`, 'm'));
      expect(a!.records().map((x) => x.id)).toEqual(['up-1']);
      expect(await a!.windows()).toEqual(['up-1']);
    } finally {
      await server.start();
    }
  }, 300_000);
});
