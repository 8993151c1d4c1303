import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { eventually } from '../helpers/tmux.js';
import { fixture, spawnFleet, type SpawnFleet } from '../spawn/helpers.js';

/** What a person sees in a pane and from the CLI. */

const ECHO = '../workday/echo.yaml';
let f: SpawnFleet | undefined;
afterEach(async () => {
  await f?.close();
  f = undefined;
});

/** Waits until the agent is idle after its `n`th task. */
async function idleAfter(fleet: SpawnFleet, id: string, n: number): Promise<void> {
  await eventually(
    () => {
      const r = fleet.record(id);
      return r.status === 'idle' && (r.lastTask?.task ?? 0) >= n;
    },
    30_000,
    `${id} to finish task ${n}`,
  );
}

describe('the working day: smaller items', () => {
  it('/agent list in a pane lists the definitions with their descriptions', async () => {
    f = spawnFleet({ definitions: { echo: ECHO, helper: ECHO } });
    expect((await f.spawnAgent(['--agent', 'echo', '--id', 'lister', 'hello'])).exitCode).toBe(0);
    await idleAfter(f, 'lister', 1);
    const pane = f.record('lister').tmux!.paneId;
    await f.tmux.tmux('send-keys', '-t', pane, '-l', '/agent list');
    await f.tmux.tmux('send-keys', '-t', pane, 'Enter');
    const screen = await f.tmux.waitFor(pane, /helper\s+test agent helper/, 20_000);
    expect(screen).toMatch(/echo\s+test agent echo\s+\(script:/);
    expect(screen).not.toMatch(/not yet available/);
  });

  it('collect hands out the finished task of an agent still open, once per task, and not again when it ends', async () => {
    f = spawnFleet({ definitions: { echo: ECHO } });
    expect((await f.spawnAgent(['--agent', 'echo', '--id', 'open', 'first job'])).exitCode).toBe(0);
    await idleAfter(f, 'open', 1);
    const first = await f.flotilla(['collect']);
    expect(first.exitCode, first.stderr).toBe(0);
    expect(first.stdout).toMatch(/^━━ open · echo · completed · task 1, agent still open/m);
    expect(first.stdout).toContain('Echo: first job');
    expect((await f.flotilla(['collect'])).stdout).toBe('');

    // A second task: its answer is new.
    const pane = f.record('open').tmux!.paneId;
    await f.tmux.tmux('send-keys', '-t', pane, '-l', 'second job');
    await f.tmux.tmux('send-keys', '-t', pane, 'Enter');
    await idleAfter(f, 'open', 2);
    const json = JSON.parse((await f.flotilla(['collect', '--json'])).stdout) as {
      id: string;
      task?: number;
      output: string;
    }[];
    expect(json).toEqual([expect.objectContaining({ id: 'open', task: 2, output: 'Echo: second job' })]);

    // Ending it adds no new answer: nothing is handed out twice.
    expect((await f.flotilla(['cancel', 'open'])).exitCode).toBe(0);
    await eventually(() => f!.record('open').status === 'cancelled', 20_000, 'open to end');
    expect(JSON.parse((await f.flotilla(['collect', '--json'])).stdout)).toEqual([]);
    expect(f.record('open').collectedAt).not.toBeNull();
  });

  it("a child's max_turns is its own (6 under a parent with 5), and the pane shows spawn_agent → the child's id", async () => {
    f = spawnFleet();
    const def = (name: string, turns: number, script: string) =>
      writeFileSync(
        join(f!.layout.agentsDir, `${name}.md`),
        `---\nname: ${name}\ndescription: test agent ${name}\nmax_turns: ${turns}\nmodel: script:${fixture(script)}\n---\nYou are ${name}.\n`,
      );
    def('boss', 5, '../workday/turns-parent.yaml');
    def('six', 6, ECHO);
    const r = await f.spawnAgent(['--agent', 'boss', 'delegate']);
    expect(r.exitCode, r.stderr).toBe(0);
    const boss = r.stdout;
    await eventually(
      () => f!.record(boss).lastLine.startsWith('Helper said:'),
      30_000,
      'the boss to hear from its child',
    );
    const kid = f.record('kid');
    expect(kid).toMatchObject({ parentId: boss, maxTurns: 6, status: 'idle' });
    expect(kid.lastLine).toBe(`Echo: report to ${boss}`);
    const screen = await f.tmux.waitFor(f.record(boss).tmux!.paneId, /spawn_agent → /, 10_000);
    expect(screen).toMatch(/spawn_agent → kid\s*$/m);
    expect(screen).not.toMatch(/spawn_agent → boss/);
  });

  it('send to an ended agent still delivers, and says on stderr that no one reads it now and how to resume', async () => {
    f = spawnFleet({ definitions: { echo: ECHO } });
    expect((await f.spawnAgent(['--wait', '--oneshot', '--agent', 'echo', '--id', 'gone', 'once'])).exitCode).toBe(0);
    await eventually(() => f!.record('gone').status === 'completed', 20_000, 'gone to end');
    const sent = await f.flotilla(['send', 'gone', 'are you there?']);
    expect(sent.exitCode).toBe(0);
    expect(sent.stdout).toMatch(/^\S+$/);
    expect(sent.stderr).toBe(
      "flotilla: gone has ended (completed), so no one reads this now; it waits in its inbox, and 'flotilla resume gone' continues that agent with it",
    );
    expect(f.mail('gone').some((m) => m.body?.includes('are you there?'))).toBe(true);

    // To a live agent: silent as before.
    expect((await f.spawnAgent(['--agent', 'echo', '--id', 'here', 'hi'])).exitCode).toBe(0);
    await idleAfter(f, 'here', 1);
    const live = await f.flotilla(['send', 'here', 'ping']);
    expect(live.exitCode).toBe(0);
    expect(live.stderr).toBe('');
  });
});
