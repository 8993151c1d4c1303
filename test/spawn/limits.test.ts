import { readFileSync } from 'node:fs';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { busFor, closeBuses } from '../../src/bus/open.js';
import { loadConfig } from '../../src/config/load.js';
import { defaultConfig } from '../../src/config/schema.js';
import { createRecord } from '../../src/fleet/registry.js';
import { launchAgent } from '../../src/spawn/launch.js';
import { prepareSpawn } from '../../src/spawn/prepare.js';
import { natsServer, type NatsServer } from '../helpers/nats.js';
import { recordInput } from '../helpers/records.js';
import { eventually } from '../helpers/tmux.js';
import { completionsFrom, fixture, isAlive, spawnFleet, type SpawnFleet } from './helpers.js';

let f: SpawnFleet | undefined;
afterEach(async () => {
  await f?.close();
  f = undefined;
});

describe('limits at spawn', () => {
  it('a chain of agents that always spawn stops at limits.max_depth, with no window beyond it', async () => {
    f = spawnFleet({ config: 'limits:\n  max_depth: 2\n', definitions: { chain: 'chain.yaml' } });
    const r = await f.spawnAgent(['--wait', '--agent', 'chain', '--id', 'c0', 'start the chain']);
    expect(r.exitCode).toBe(0);
    const recs = f.records();
    expect(recs.map((x) => x.depth).sort()).toEqual([0, 1, 2]);
    expect((await f.windows()).length).toBe(3);
    const deepest = recs.find((x) => x.depth === 2)!;
    // The deepest agent was refused with the machine-readable line, and says so in its answer.
    const answer = readFileSync(f.layout.output(deepest.id), 'utf8');
    expect(answer).toContain('depth 2 got:');
    expect(answer).toContain('[flotilla:depth-limit depth=3 max=2]');
    const audit = readFileSync(f.layout.auditFile, 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(
      audit.filter((a) => a.event === 'spawn_refused' && a.code === 'depth-limit' && a.agent === deepest.id),
    ).toHaveLength(1);
    // Each level's answer carries the one below it up to the root.
    expect(r.stdout).toContain('depth 0 got:');
  });

  it('the harness is the authority: a child past its own max_depth refuses at startup, exits 1 with the bracketed line, and its parent gets a refused completion', async () => {
    f = spawnFleet({ config: 'limits:\n  max_depth: 1\n' });
    const layout = f.layout;
    createRecord(layout, recordInput('top-aaaaaa', { status: 'idle', depth: 0, rootId: 'top-aaaaaa', cwd: f.project }));
    const mid = createRecord(
      layout,
      recordInput('mid-aaaaaa', {
        status: 'idle',
        depth: 1,
        parentId: 'top-aaaaaa',
        rootId: 'top-aaaaaa',
        cwd: f.project,
        effectivePolicy: { tools: ['shell'], permissionMode: 'dont_ask', secrets: [] },
      }),
    );
    // The spawner was told a deeper limit than the child will read from the project config.
    const { config } = await loadConfig({ layout, env: f.env, userFile: null });
    const loose = { ...config, limits: { ...config.limits, max_depth: 5 } };
    const prepared = await prepareSpawn(
      layout,
      loose,
      { prompt: 'x', mode: 'oneshot', id: 'too-deep', model: `script:${fixture('worker.yaml')}` },
      { parent: mid, env: f.env },
    );
    await expect(launchAgent(layout, loose, prepared, { env: f.env })).rejects.toThrow(/too-deep' refused at startup/);
    const rec = f.record('too-deep');
    expect(rec.status).toBe('refused');
    expect(rec.exitReason).toMatch(/depth 2 exceeds limits.max_depth 1/);
    const screen = await f.tmux.waitFor(rec.tmux!.paneId, /Pane is dead \(status 1/, 40_000);
    expect(screen).toContain('[flotilla:depth-limit depth=2 max=1]');
    const mail = completionsFrom(f, 'mid-aaaaaa', 'too-deep');
    expect(mail).toHaveLength(1);
    expect(mail[0]!.status).toBe('refused');
    expect(await f.windows()).toEqual(['too-deep']);
  });

  it("FLOTILLA_AGENT_ID naming an unrelated agent is refused as forged; env -u from an agent's shell still makes its child", async () => {
    f = spawnFleet({ definitions: { spawner: 'shell-spawn.yaml', worker: 'worker.yaml' } });
    const r = await f.spawnAgent(['--wait', '--agent', 'spawner', '--id', 'sp', 'spawn from your shell']);
    expect(r.exitCode).toBe(0);
    expect(r.stdout).toBe('spawned via-shell');
    const child = f.record('via-shell');
    expect(child.parentId).toBe('sp');
    expect(child.depth).toBe(1);
    expect(child.spawnedBy).toBe('agent');
    // The agent 'sp' is alive (idle), but this shell is not its descendant.
    const forged = await f.spawnAgent(['--oneshot', '--model', `script:${fixture('worker.yaml')}`, 'x'], {
      FLOTILLA_AGENT_ID: 'sp',
    });
    expect(forged.exitCode).toBe(1);
    expect(forged.stderr).toContain("FLOTILLA_AGENT_ID names 'sp', which is not an ancestor");
    expect(forged.stderr).toMatch(/^\[flotilla:forged-parent id=sp\]$/m);
    expect(
      f
        .records()
        .map((x) => x.id)
        .sort(),
    ).toEqual(['sp', 'via-shell']);
  });
});

// The cap race holds on every bus (docs/design.md §18): on nats:// a running agent also holds
// one of the fleet's slots on a real nats-server started here, and its own host sees a
// SIGKILLed holder dead at once, as the kernel frees the host's socket slot.
describe.each([{ bus: 'maildir' }, { bus: 'nats' }] as const)('the running cap on the $bus bus', ({ bus: kind }) => {
  let server: NatsServer | undefined;
  beforeAll(async () => {
    if (kind === 'nats') server = await natsServer();
  }, 120_000);
  afterAll(async () => {
    await closeBuses();
    await server?.kill();
  });

  it('20 simultaneous spawns against max_running 4: exactly 4 run, 16 refused; SIGKILL of one frees a slot at once', async () => {
    f = spawnFleet();
    const env = { FLOTILLA_LIMITS_MAX_RUNNING: '4', ...(kind === 'nats' ? { FLOTILLA_FLEET_BUS: server!.url } : {}) };
    // Slots count work (§5.2): each child keeps working (a long sleep), so it keeps its slot.
    const args = (i: number) => ['--id', `c${i}`, '--model', `script:${fixture('sleeper.yaml')}`, 'keep working'];
    const results = await Promise.all(Array.from({ length: 20 }, (_, i) => f!.spawnAgent(args(i), env)));
    const ok = results.filter((r) => r.exitCode === 0);
    const refused = results.filter((r) => r.exitCode === 1);
    expect(ok).toHaveLength(4);
    expect(refused).toHaveLength(16);
    for (const r of refused) expect(r.stderr).toMatch(/^\[flotilla:concurrency-limit running=4 max=4\]$/m);
    expect((await f.windows()).length).toBe(4);
    // spawn-agent returns once the child holds its slot; the child writes its pid just after.
    // On a loaded machine four harnesses starting at once can take a while: wait for the
    // condition, and if it never comes say what the records show.
    const running = await eventually(
      () => {
        const live = f!.records().filter((r) => r.pid && isAlive(r.pid));
        return live.length >= 4 && live;
      },
      60_000,
      'four running harnesses',
    ).catch((err: unknown) => {
      throw new Error(
        `${String(err)}; records: ${f!
          .records()
          .map((r) => `${r.id} ${r.status} pid=${r.pid ?? '-'} ${r.exitReason ?? ''}`)
          .join(', ')}`,
      );
    });
    expect(running).toHaveLength(4);
    // On nats:// the four hold the fleet's slots too, as the bus counts them.
    if (kind === 'nats')
      expect(await busFor(f.layout, { fleet: { ...defaultConfig().fleet, bus: server!.url } }).caps.countSlots(4)).toBe(
        4,
      );
    expect((await f.spawnAgent(args(20), env)).exitCode).toBe(1);
    process.kill(running[0]!.pid!, 'SIGKILL');
    await eventually(() => !isAlive(running[0]!.pid!), 5_000, 'the killed harness to die');
    const again = await f.spawnAgent(args(21), env);
    expect(again.stderr).toBe('');
    expect(again.exitCode).toBe(0);
  });
});
