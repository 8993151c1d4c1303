import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { busFor } from '../../src/bus/open.js';
import { defaultConfig } from '../../src/config/schema.js';
import { isTerminal } from '../../src/fleet/record-status.js';
import { encodeLineage } from '../../src/hosts/lineage.js';
import { hostsOnBus } from './bus-hosts.js';
import { eventually } from '../helpers/tmux.js';
import { isAlive, type Run } from './helpers.js';

// limits.max_children across two hosts (docs/design.md §5.2, §18): two projects, each its own
// fleet root, tmux server and host name, sharing one real nats-server and one fleet name. The
// parent runs on host a and spawns from its shell; host b opens children of it as a's
// `spawn-agent --host b` has b do over ssh (`flotilla spawn --lineage`). Only the bus can
// count the parent's children on both.
const onBus = hostsOnBus('limits:\n  max_children: 3\n');

const REFUSED = '[flotilla:children-limit parent=P children=3 max=3]';

describe('max_children across two hosts on a nats:// bus', () => {
  it('a parent with max_children 3 racing 5 spawns from its shell on host a against 5 on host b: exactly 3 children start fleet-wide, 7 refused naming the limit; a child ending on the other host frees its place', async () => {
    const fleet = `kids${randomBytes(4).toString('hex')}`;
    const [a, b] = [
      onBus.host('a', fleet, { parent: 'children-racer.yaml', sleeper: 'sleeper.yaml' }),
      onBus.host('b', fleet, { sleeper: 'sleeper.yaml' }),
    ];
    expect((await a!.spawnAgent(['--id', 'P', '--agent', 'parent', 'spawn your children'])).exitCode).toBe(0);
    const parent = await eventually(
      () => {
        const r = a!.record('P');
        return r.pid && r.status === 'working' ? r : undefined;
      },
      60_000,
      'the parent working',
    );
    // What a's `spawn-agent --host b` sends over ssh: the parent's record and the tree's limits.
    const lineage = encodeLineage('a', parent, { ...defaultConfig().limits, max_children: 3 });
    const onB = (id: string): Promise<Run> =>
      b!.flotilla(['spawn', '--lineage', lineage, '--agent', 'sleeper', '--id', id, 'keep working']);

    writeFileSync(join(a!.project, 'go'), '');
    const fromB = await Promise.all([1, 2, 3, 4, 5].map((i) => onB(`b${i}`).then((r) => ({ id: `b${i}`, r }))));
    const outA = (name: string) => {
      const file = join(a!.project, name);
      return existsSync(file) ? readFileSync(file, 'utf8') : undefined;
    };
    const fromA = await eventually(
      () => {
        const all = [1, 2, 3, 4, 5].map((i) => ({ id: `a${i}`, out: outA(`out-a${i}`) }));
        return all.every((x) => x.out !== undefined) && all.map((x) => ({ id: x.id, out: x.out! }));
      },
      120_000,
      "the parent's five spawns to finish",
    );

    const started = [
      ...fromA.filter((x) => /exit=0\s*$/.test(x.out)).map((x) => x.id),
      ...fromB.filter((x) => x.r.exitCode === 0).map((x) => x.id),
    ];
    expect(started).toHaveLength(3);
    for (const x of fromA.filter((y) => !started.includes(y.id))) {
      expect(x.out).toContain(
        "spawn refused: 'P' already has 3 live children (limits.max_children 3) — wait for one to finish (flotilla wait), or raise limits.max_children",
      );
      expect(x.out).toContain(REFUSED);
      expect(x.out).toMatch(/exit=1\s*$/);
    }
    for (const x of fromB.filter((y) => !started.includes(y.id))) {
      expect(x.r.exitCode).toBe(1);
      expect(x.r.stderr).toMatch(new RegExp(`^${REFUSED.replace(/[[\]]/g, '\\$&')}$`, 'm'));
    }
    // What the person sees on both hosts together: the parent and three children, all working.
    expect((await a!.windows()).length + (await b!.windows()).length).toBe(4);
    const children = await eventually(
      () => {
        const live = [...a!.records(), ...b!.records()].filter((r) => r.parentId === 'P' && r.pid && isAlive(r.pid));
        return live.length === 3 && live;
      },
      60_000,
      'three children running',
    );
    expect(children.map((c) => c.id).sort()).toEqual([...started].sort());

    // A child on host b: one of the winners, or one b opens once a's child gave its place back.
    let childOnB = started.find((id) => id.startsWith('b'));
    if (!childOnB) {
      expect((await onB('b-extra')).exitCode).toBe(1);
      expect((await a!.flotilla(['cancel', started[0]!])).exitCode).toBe(0);
      const extra = await eventually(
        async () => {
          const r = await onB('b-extra');
          return r.exitCode === 0 ? r : undefined;
        },
        60_000,
        "a's cancelled child's place taken on b",
      );
      expect(extra.stderr).toBe('');
      childOnB = 'b-extra';
    }
    // Ended on b: its place is free for the parent on a, whose sixth spawn starts.
    expect((await b!.flotilla(['cancel', childOnB])).exitCode).toBe(0);
    const seenFromA = busFor(a!.layout, {
      fleet: { ...defaultConfig().fleet, bus: onBus.url(), name: fleet, host: 'a' },
    }).records;
    await eventually(
      async () => {
        const r = await seenFromA.get(childOnB);
        return r && isTerminal(r.status);
      },
      60_000,
      `${childOnB}'s end on the bus`,
    );
    writeFileSync(join(a!.project, 'go2'), '');
    const late = await eventually(() => outA('out-a-late'), 120_000, "the parent's late spawn");
    expect(late).toMatch(/^a-late\n[\s\S]*exit=0\s*$/);
    await eventually(
      () => {
        const r = a!.record('a-late');
        return r.pid !== null && isAlive(r.pid);
      },
      60_000,
      'a-late running',
    );
    // Three again fleet-wide: b's next one is refused.
    const full = await onB('b-full');
    expect(full.exitCode).toBe(1);
    expect(full.stderr).toContain(REFUSED);
  }, 600_000);
});
