import { copyFileSync, existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { eventually } from '../helpers/tmux.js';
import { completionsFrom, fixture, spawnFleet, type SpawnFleet } from './helpers.js';

let f: SpawnFleet | undefined;
afterEach(async () => {
  if (f) writeFileSync(join(f.project, 'release'), '');
  await f?.close();
  f = undefined;
});

/**
 * docs/security-fleet.md "Slots belong to harnesses": an agent's command binds every slot name of
 * the fleet it can compute (both sides, far past max_running), with no sandbox and inside
 * bubblewrap with the network on (the same network namespace, so the same names). The
 * person's spawns still get their slots, the cap stays exact, and status and doctor name
 * the squatter.
 */
// `none` too: a person may choose it, and the slot cap must hold there as in the sandbox.
const MODES = [
  { mode: 'none', config: 'security:\n  sandbox: none\n' },
  { mode: 'bubblewrap, network on', config: 'security:\n  sandbox: bubblewrap\n  sandbox_network: true\n' },
];

describe.each(MODES)('a command squatting the slot names ($mode)', ({ config }) => {
  it("refuses none of the person's spawns, keeps max_running exact, and is named by status and doctor", async () => {
    f = spawnFleet({
      config: `limits:\n  max_running: 3\ntools:\n  shell_timeout_secs: 600\n${config}`,
      definitions: { squatter: 'run-prompt.yaml', worker: 'worker.yaml', sleeper: 'sleeper.yaml' },
    });
    const out = join(f.project, 'squat.out');
    // Inside the project: the sandbox shows the agent its project, not this checkout (a clone under /tmp is hidden).
    const squat = join(f.project, 'squat-slots.mjs');
    copyFileSync(fixture('squat-slots.mjs'), squat);
    const command = `"$FLOTILLA_NODE" ${squat} ${f.layout.root} ${out} ${join(f.project, 'release')}`;
    expect((await f.spawnAgent(['--agent', 'squatter', '--id', 'sq', command])).exitCode).toBe(0);
    const bound = await eventually(
      () => existsSync(out) && readFileSync(out, 'utf8'),
      120_000,
      'the squatter to bind the names',
    );
    // Its own agent holds one running name; the command took every other one of 0..39.
    expect(bound).toBe('bound 79\n');

    // The person's spawn runs and its agent answers.
    const w = await f.spawnAgent(['--wait', '--agent', 'worker', '--id', 'wk', 'work']);
    expect(w.stderr).not.toContain('refused');
    expect(w.exitCode).toBe(0);
    expect(w.stdout).toContain('result-of-wk');
    expect(completionsFrom(f, 'human', 'wk')).toHaveLength(1);

    // Exact all the same: the squatting agent and two sleepers fill max_running 3; a fourth is refused.
    for (const id of ['s1', 's2'])
      expect((await f.spawnAgent(['--agent', 'sleeper', '--id', id, 'sleep'])).exitCode).toBe(0);
    const full = await f.spawnAgent(['--agent', 'worker', '--id', 'w4', 'work']);
    expect(full.exitCode).toBe(1);
    expect(full.stderr).toContain('spawn refused: 3 agents are working (limits.max_running 3)');

    // Named, with its pid, by status and doctor (WARN, exit 0).
    const status = await f.flotilla(['status']);
    expect(status.stdout).toMatch(
      /^79 slot names \(slots 0, 1, 2, 3, 4, 5, …\) held by pid \d+ \(.*squat-slots\.mjs.*\), not a Flotilla harness — ignored, they take no agent's place; end it with: kill \d+$/m,
    );
    const doctor = await f.flotilla(['doctor']);
    expect(doctor.stdout).toMatch(/WARN\s+slots\b.*held by pid \d+/);
  }, 240_000);
});
