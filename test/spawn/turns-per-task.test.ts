import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { eventually } from '../helpers/tmux.js';
import { completionsFrom, fixture, spawnFleet, type SpawnFleet } from './helpers.js';

// `max_turns` bounds each task of a persistent agent, not its whole life.
let f: SpawnFleet | undefined;
afterEach(async () => {
  await f?.close();
  f = undefined;
});

describe('max_turns per task', () => {
  it('a persistent agent runs 4 tasks of max_turns turns each, every one completes, and its pane and status count turns per task (never above the limit)', async () => {
    f = spawnFleet();
    writeFileSync(
      join(f.layout.agentsDir, 'stepper.md'),
      `---\nname: stepper\ndescription: three turns a task\nmax_turns: 3\nmodel: script:${fixture('three-turns.yaml')}\n---\nYou are stepper.\n`,
    );
    const r = await f.spawnAgent(['--agent', 'stepper', '--id', 'st', 'task one']);
    expect(r.exitCode, r.stderr).toBe(0);
    const window = (await f.windows()).find((w) => w === 'st');
    expect(window).toBe('st');
    for (let task = 1; task <= 4; task++) {
      if (task > 1) expect((await f.flotilla(['send', 'st', `task number ${task}`])).exitCode).toBe(0);
      await eventually(
        () => f!.record('st').lastTask?.task === task && f!.record('st').status === 'idle',
        60_000,
        `task ${task} answered`,
      );
      expect(f.record('st').lastTask).toMatchObject({ task, status: 'completed' });
      // What the person sees counts this task's turns against the per-task limit, never above it.
      const pane = await f.tmux.waitFor('st', /st · idle · depth 0\/\d+ · turn \d+\/\d+/);
      expect(pane.match(/ · turn (\d+)\/(\d+) · /g)?.at(-1)).toBe(' · turn 3/3 · ');
      const status = await f.flotilla(['status']);
      expect(status.stdout.split('\n').find((l) => l.startsWith('st '))).toMatch(/^st +idle +0 +3\/3 /);
    }
    // The lifetime count is still kept (usage, audit): four tasks of three turns.
    expect(f.record('st').turns).toBe(12);
    const answers = completionsFrom(f, 'human', 'st');
    expect(answers).toHaveLength(4);
    expect(answers.every((m) => m.status === 'completed')).toBe(true);
  }, 240_000);
});
