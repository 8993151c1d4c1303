import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { AgentRecord } from '../../src/fleet/record.js';
import { TOOLS_DIR } from '../../src/layout/package.js';
import { eventually } from '../helpers/tmux.js';
import { isAlive, spawnFleet, type SpawnFleet } from '../spawn/helpers.js';

/** Agents that stay usable, and a parent agent's shell that can use the whole CLI. */

const ECHO = '../workday/echo.yaml';
let f: SpawnFleet | undefined;
afterEach(async () => {
  await f?.close();
  f = undefined;
});

function idleAfterTask(rec: AgentRecord): boolean {
  return rec.status === 'idle' && rec.lastTask !== null;
}

describe('the working day: lifecycle', () => {
  it('with limits.idle_timeout_secs 3 the harness really exits and its pane says how to resume', async () => {
    f = spawnFleet({ config: 'limits:\n  idle_timeout_secs: 3\n', definitions: { echo: ECHO } });
    const r = await f.spawnAgent(['--agent', 'echo', '--id', 'sleepy', 'hello']);
    expect(r.exitCode).toBe(0);
    // The task's end, not the idle state: 3 s later the agent has left idle, and a slow poll
    // could miss that window. That it ended because it was idle is checked below.
    const rec = await eventually(
      () => (f!.record('sleepy').lastTask !== null ? f!.record('sleepy') : undefined),
      20_000,
      'the task to end',
    );
    // 3 s idle, then out; a generous deadline for a loaded machine (the figure is in the report).
    await eventually(() => !isAlive(rec.pid!), 15_000, 'the idle harness to exit');
    const ended = f.record('sleepy');
    expect(ended.status).toBe('completed');
    expect(ended.exitReason).toBe('idle timeout');
    const screen = await f.tmux.waitFor(rec.tmux!.paneId, /flotilla resume sleepy/, 10_000);
    expect(screen).toContain('ended: completed (idle timeout)');
  });

  it('without the setting, an agent idle for 60 s still answers a typed line', async () => {
    f = spawnFleet({ definitions: { echo: ECHO } });
    const r = await f.spawnAgent(['--agent', 'echo', '--id', 'awake', 'first']);
    expect(r.exitCode).toBe(0);
    const rec = await eventually(
      () => (idleAfterTask(f!.record('awake')) ? f!.record('awake') : undefined),
      20_000,
      'the task to end',
    );
    await new Promise((res) => setTimeout(res, 61_000));
    expect(isAlive(rec.pid!)).toBe(true);
    expect(f.record('awake').status).toBe('idle');
    await f.tmux.tmux('send-keys', '-t', rec.tmux!.paneId, 'still there', 'Enter');
    await f.tmux.waitFor(rec.tmux!.paneId, /Echo: still there/, 20_000);
  }, 180_000); // 61 s of it idle: leave the start and the answer room on a loaded machine.

  it("from an agent's shell, flotilla status --json and flotilla wait <child> work (same Node, on PATH)", async () => {
    f = spawnFleet({ definitions: { echo: ECHO, boss: '../workday/shell-parent.yaml' } });
    const r = await f.spawnAgent(['--wait', '--agent', 'boss', '--id', 'boss', 'use the cli']);
    expect(r.exitCode).toBe(0);
    const read = (name: string) => readFileSync(join(f!.project, name), 'utf8').trim();
    expect(read('spawned.out')).toBe('kid');
    expect(read('which.out')).toBe(join(TOOLS_DIR, 'flotilla'));
    expect(read('wait.code')).toBe('0');
    expect(read('wait.out')).toContain('Echo: say hi');
    expect(read('status.code')).toBe('0');
    const listed = JSON.parse(read('status.json')) as { id: string; parentId: string | null }[];
    expect(listed.find((x) => x.id === 'kid')?.parentId).toBe('boss');
  });
});

describe('flotilla doctor', () => {
  it('says whether flotilla and spawn-agent resolve on PATH, and how to fix it', async () => {
    const { commandChecks } = await import('../../src/cli/commands/doctor-checks.js');
    const found = commandChecks({ PATH: `/nonexistent:${TOOLS_DIR}` });
    expect(found.map((c) => [c.name, c.ok, c.detail])).toEqual([
      ['flotilla on PATH', true, join(TOOLS_DIR, 'flotilla')],
      ['spawn-agent on PATH', true, join(TOOLS_DIR, 'spawn-agent')],
    ]);
    const missing = commandChecks({ PATH: '/nonexistent' });
    expect(missing.every((c) => !c.ok && c.detail === 'not found')).toBe(true);
    expect(missing[0]!.fix).toContain(`export PATH="${TOOLS_DIR}:$PATH"`);
  });
});
