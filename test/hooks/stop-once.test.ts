import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { execa } from 'execa';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { stopHookOnce } from '../../src/hooks/stop-once.js';
import { tempDir, tempFleet, type TempFleet } from '../helpers/fleet.js';
import { eventually } from '../helpers/tmux.js';
import { transpileForChild } from './helpers.js';

let fleet: TempFleet;
beforeEach(() => {
  fleet = tempFleet();
});
afterEach(() => fleet.cleanup());

// Each child: compile-free import of the real module, signal readiness, wait for "go", then race.
const RACER = `
import { appendFileSync, existsSync, writeFileSync } from 'node:fs';
import { layoutFor } from './src/layout/layout.js';
import { stopHookOnce } from './src/hooks/stop-once.js';
const [root, ready, go, log, ...ids] = process.argv.slice(2);
const layout = layoutFor(root);
writeFileSync(ready, '');
while (!existsSync(go)) await new Promise((r) => setTimeout(r, 1));
const ran = [];
await Promise.all(ids.map(async (id) => {
  if (await stopHookOnce(layout, id, async () => { appendFileSync(log, id + ' ' + process.pid + '\\n'); })) ran.push(id);
}));
process.stdout.write(JSON.stringify(ran));
`;

describe('stopHookOnce', () => {
  it('runs the hook once, however often it is called in one process', async () => {
    let count = 0;
    const run = async () => {
      count++;
    };
    const results = await Promise.all([1, 2, 3].map(() => stopHookOnce(fleet.layout, 'a-1', run)));
    expect(results.filter(Boolean)).toHaveLength(1);
    expect(await stopHookOnce(fleet.layout, 'a-1', run)).toBe(false);
    expect(count).toBe(1);
    expect(existsSync(fleet.layout.stopHookMarker('a-1'))).toBe(true);
    expect(JSON.parse(readFileSync(fleet.layout.stopHookMarker('a-1'), 'utf8'))).toMatchObject({ pid: process.pid });
    // Another agent is another claim.
    expect(await stopHookOnce(fleet.layout, 'a-2', run)).toBe(true);
    expect(count).toBe(2);
  });

  it('two processes racing for the same agents run each stop hook exactly once', async () => {
    const code = tempDir('flotilla-racer-');
    try {
      transpileForChild(
        [
          'src/errors.ts',
          'src/layout/layout.ts',
          'src/layout/git-top.ts',
          'src/hooks/stop-once.ts',
          'src/fleet/done-once.ts',
          'src/fleet/proc.ts',
        ],
        code.dir,
      );
      const script = join(code.dir, 'racer.mjs');
      writeFileSync(script, RACER);
      const ids = Array.from({ length: 20 }, (_, i) => `agent-${i}`);
      const go = join(code.dir, 'go');
      const log = join(code.dir, 'log');
      const racers = [1, 2].map((n) =>
        execa(process.execPath, [script, fleet.layout.root, join(code.dir, `ready-${n}`), go, log, ...ids], {
          cwd: code.dir,
        }),
      );
      await eventually(
        () => existsSync(join(code.dir, 'ready-1')) && existsSync(join(code.dir, 'ready-2')),
        20_000,
        'both racers ready',
      );
      writeFileSync(go, '');
      const [a, b] = await Promise.all(racers);
      const ranA = JSON.parse(a!.stdout) as string[];
      const ranB = JSON.parse(b!.stdout) as string[];
      // Every id was claimed by exactly one process…
      expect([...ranA, ...ranB].sort()).toEqual([...ids].sort());
      expect(ranA.filter((id) => ranB.includes(id))).toEqual([]);
      // …and the hook itself ran exactly once per id.
      const lines = readFileSync(log, 'utf8').trim().split('\n');
      expect(lines).toHaveLength(ids.length);
      expect(new Set(lines.map((l) => l.split(' ')[0])).size).toBe(ids.length);
    } finally {
      code.cleanup();
    }
  });
});
