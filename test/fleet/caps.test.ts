import { existsSync, readdirSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  admitSpawn,
  childrenRefusal,
  claimTreeSpawn,
  concurrencyRefusal,
  depthRefusal,
  liveChildren,
  treeSpawnCount,
} from '../../src/fleet/caps.js';
import { processStartTime } from '../../src/fleet/proc.js';
import { listRecords } from '../../src/fleet/registry.js';
import { acquireSlot, countHeld } from '../../src/fleet/slots.js';
import { FlotillaError } from '../../src/errors.js';
import { layoutFor } from '../../src/layout/layout.js';
import { tempFleet, type TempFleet } from '../helpers/fleet.js';
import { compileSources, type CompiledSources } from './helpers/compile.js';
import { startFixture, type Fixture } from './helpers/fixture.js';
import { registerAgent } from './helpers/records.js';

let compiled: CompiledSources;
let fleet: TempFleet;
const started: Fixture[] = [];

beforeAll(() => {
  compiled = compileSources(['src/fleet/caps.ts', 'src/layout/layout.ts']);
});
afterAll(() => compiled.cleanup());
afterEach(() => {
  for (const f of started.splice(0)) f.kill('SIGKILL');
  fleet?.cleanup();
});

const limits = { max_depth: 3, max_children: 2, max_spawns_per_tree: 32, max_running: 8 };

function caught(fn: () => unknown): FlotillaError {
  try {
    fn();
  } catch (err) {
    if (err instanceof FlotillaError) return err;
    throw err;
  }
  throw new Error('expected a refusal');
}

describe('spawn caps', () => {
  it('refuses a child deeper than limits.max_depth with the bracket line', () => {
    expect(depthRefusal(null, 0)).toBeNull();
    expect(depthRefusal({ depth: 2 }, 3)).toBeNull();
    const err = depthRefusal({ depth: 3 }, 3)!;
    expect(err.message).toMatch(/^spawn refused: depth 4 exceeds limits\.max_depth 3 — /);
    expect(err.bracket).toBe('[flotilla:depth-limit depth=4 max=3]');
    expect(err.code).toBe('depth-limit');
    expect(err.exitCode).toBe(1);
  });

  it("counts a parent's running and pending children, not dead or finished ones", async () => {
    fleet = tempFleet();
    const self = registerAgent(fleet.layout, 'lead-aaaaaa', {
      pid: process.pid,
      pidStartTime: processStartTime(process.pid),
    });
    const child = { parentId: self.id, rootId: self.id, depth: 1 };
    registerAgent(fleet.layout, 'w-live', { ...child, pid: process.pid, pidStartTime: processStartTime(process.pid) });
    registerAgent(fleet.layout, 'w-pending', { ...child, pid: null, pidStartTime: null, status: 'spawning' });
    registerAgent(fleet.layout, 'w-reused', { ...child, pid: process.pid, pidStartTime: '1' });
    registerAgent(fleet.layout, 'w-done', {
      ...child,
      pid: process.pid,
      pidStartTime: processStartTime(process.pid),
      status: 'completed',
    });
    const records = listRecords(fleet.layout);
    expect(
      liveChildren(self.id, records)
        .map((r) => r.id)
        .sort(),
    ).toEqual(['w-live', 'w-pending']);
    const err = childrenRefusal(self, 2, records)!;
    expect(err.bracket).toBe('[flotilla:children-limit parent=lead-aaaaaa children=2 max=2]');
    expect(err.message).toMatch(
      /^spawn refused: 'lead-aaaaaa' already has 2 live children \(limits\.max_children 2\) — /,
    );
    expect(childrenRefusal(self, 3, records)).toBeNull();
    expect(childrenRefusal(null, 0, records)).toBeNull();
    // admitSpawn applies the same check before anything is reserved.
    await expect(
      admitSpawn(fleet.layout, limits, { id: 'w-new', parent: self, rootId: self.id }),
    ).rejects.toMatchObject({ code: 'children-limit' });
    expect(await countHeld(fleet.layout, limits.max_running)).toBe(0);
    expect(treeSpawnCount(fleet.layout, self.id)).toBe(0);
  });

  it('the tree spawn cap is exact under 20 concurrent processes with max 5', async () => {
    fleet = tempFleet();
    const env = { ...process.env, FLOTILLA_TEST_SRC: compiled.srcDir };
    const procs = Array.from({ length: 20 }, (_, i) => {
      const f = startFixture('tree-claim.mjs', [fleet.layout.root, 'root-abc123', '5', `agent-${i}`], env);
      started.push(f);
      return f;
    });
    const results = await Promise.all(procs.map((f) => f.waitLine(/^(claimed \d+|\[flotilla:.*\])$/)));
    const claimed = results.filter((r) => r.startsWith('claimed')).sort();
    expect(claimed).toEqual(['claimed 0', 'claimed 1', 'claimed 2', 'claimed 3', 'claimed 4']);
    expect(results.filter((r) => r === '[flotilla:tree-limit root=root-abc123 spawns=5 max=5]')).toHaveLength(15);
    const dir = join(fleet.layout.slotsDir, 'tree-root-abc123');
    expect(readdirSync(dir).sort()).toEqual(['spawn-0', 'spawn-1', 'spawn-2', 'spawn-3', 'spawn-4']);
    const owners = readdirSync(dir).map((f) => readFileSync(join(dir, f), 'utf8').trim());
    expect(new Set(owners).size).toBe(5);
    expect(treeSpawnCount(fleet.layout, 'root-abc123')).toBe(5);
  });

  it('refuses a root id that would leave the slots folder', () => {
    fleet = tempFleet();
    expect(caught(() => claimTreeSpawn(fleet.layout, '../evil', 5, 'x')).message).toMatch(/invalid root id/);
    expect(existsSync(join(fleet.layout.state, 'evil'))).toBe(false);
  });

  it('concurrency refusal names running and max', () => {
    const err = concurrencyRefusal(8, 8);
    expect(err.bracket).toBe('[flotilla:concurrency-limit running=8 max=8]');
    expect(err.message).toMatch(/^spawn refused: 8 agents are working \(limits\.max_running 8\) — /);
  });

  it('a fleet reached through a symlink has the same slots: max_running stays exact', async () => {
    fleet = tempFleet();
    const link = `${fleet.project}-link`;
    symlinkSync(fleet.project, link);
    try {
      const viaLink = layoutFor(join(link, '.flotilla'), link);
      const one = { ...limits, max_running: 1 };
      const first = await admitSpawn(fleet.layout, one, { id: 'root-one', parent: null, rootId: 'root-one' });
      await expect(
        admitSpawn(viaLink, one, { id: 'root-two', parent: null, rootId: 'root-two' }),
      ).rejects.toMatchObject({
        bracket: '[flotilla:concurrency-limit running=1 max=1]',
      });
      first.slot.release();
      const second = await admitSpawn(viaLink, one, { id: 'root-two', parent: null, rootId: 'root-two' });
      second.slot.release();
    } finally {
      rmSync(link);
    }
  });

  it('admitSpawn reserves a slot and a tree spawn; with all slots held it refuses and burns no tree spawn', async () => {
    fleet = tempFleet();
    const small = { ...limits, max_running: 1, max_spawns_per_tree: 2 };
    const first = await admitSpawn(fleet.layout, small, { id: 'root-one', parent: null, rootId: 'root-one' });
    expect(first).toMatchObject({ depth: 0, spawnNumber: 0 });
    expect(first.slot.index).toBe(0);
    await expect(
      admitSpawn(fleet.layout, small, { id: 'root-two', parent: null, rootId: 'root-one' }),
    ).rejects.toMatchObject({
      bracket: '[flotilla:concurrency-limit running=1 max=1]',
    });
    expect(treeSpawnCount(fleet.layout, 'root-one')).toBe(1);
    first.slot.release();
    const second = await admitSpawn(fleet.layout, small, { id: 'root-two', parent: null, rootId: 'root-one' });
    expect(second.spawnNumber).toBe(1);
    second.slot.release();
    // The tree is spent; the slot taken for the attempt is given back.
    await expect(
      admitSpawn(fleet.layout, small, { id: 'root-three', parent: null, rootId: 'root-one' }),
    ).rejects.toMatchObject({ code: 'tree-limit' });
    const again = await acquireSlot(fleet.layout, 1);
    expect(again?.index).toBe(0);
    again!.release();
  });
});
