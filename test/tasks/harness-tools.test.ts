import { existsSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { readTask } from '../../src/tasks/store.js';
import type { Task } from '../../src/tasks/task.js';
import { natsServer, personBus } from '../helpers/nats.js';
import { eventually } from '../helpers/tmux.js';
import { spawnFleet, type SpawnFleet } from '../spawn/helpers.js';

/**
 * The task board's tools as agents use them (§15): real harnesses in a real fleet, each
 * model a script calling task_list, task_claim and task_update; the board is what they
 * wrote. Pane chat commands typed into a real window.
 */

let f: SpawnFleet | undefined;
afterEach(async () => {
  await f?.close();
  f = undefined;
});

const script = (name: string): string => fileURLToPath(new URL(`../fixtures/tasks/${name}`, import.meta.url));
const task = (id: string, board = 'fleet'): Task => readTask(f!.layout.board(board), id)!;

function define(name: string, yaml: string, extra = ''): void {
  writeFileSync(
    join(f!.layout.agentsDir, `${name}.md`),
    `---\nname: ${name}\ndescription: test agent ${name}\nmodel: script:${script(yaml)}\n${extra}---\nYou are ${name}.\n`,
  );
}

/** The final answer of an agent's last task. */
function answer(id: string): string | undefined {
  const path = f!.record(id).lastTask?.outputPath;
  return path && existsSync(path) ? readFileSync(path, 'utf8').trim() : undefined;
}

describe('task tools in the harness (§15)', () => {
  it('the model sees the task through task_list, claims it with task_claim, and its answer becomes the result', async () => {
    f = spawnFleet();
    define('claimer', 'tool-claimer.yaml');
    await f.flotilla(['task', 'add', 'write the parser', '--body', 'Parse every line of input.txt.']);
    const run = await f.spawnAgent(['--agent', 'claimer', '--id', 'cl-1', '--wait', 'take the board work']);
    expect(run.exitCode).toBe(0);
    // What the model saw: the listing (in its next turn's text, in the transcript) and the task's body (in its result).
    const transcript = readFileSync(f.layout.transcript('cl-1'), 'utf8');
    expect(transcript).toContain(
      'The board says: board fleet: 1 open, 0 claimed, 0 done, 0 failed, 0 cancelled ID STATUS PRIORITY CLAIMANT AGE TITLE t1 open normal -',
    );
    expect(transcript).toMatch(/t1 open normal - \d+s write the parser/);
    expect(task('t1')).toMatchObject({ status: 'done', claimed_by: 'cl-1' });
    expect(task('t1').result).toContain(
      'claimed and read: You claimed task t1. t1 [claimed by cl-1] write the parser Parse every line of input.txt.',
    );
    expect(run.stdout).toBe('Finished: Task t1 is now done.');
    const audit = readFileSync(f.layout.auditFile, 'utf8');
    expect(audit).toMatch(/"event":"task_claimed","agent":"cl-1"/);
    expect(audit).toMatch(/"event":"task_done","agent":"cl-1"/);
  });

  it("on nats:// the tools work the fleet's board on the bus: the claim and the result are there, not in this host's files", async () => {
    const server = await natsServer();
    try {
      f = spawnFleet();
      personBus(f.env.XDG_CONFIG_HOME!, 'nats', server);
      define('claimer', 'tool-claimer.yaml');
      await f.flotilla(['task', 'add', 'write the parser', '--body', 'Parse every line of input.txt.']);
      const run = await f.spawnAgent(['--agent', 'claimer', '--id', 'cl-3', '--wait', 'take the board work']);
      expect(run.exitCode, run.stderr).toBe(0);
      expect(run.stdout).toBe('Finished: Task t1 is now done.');
      expect(readFileSync(f.layout.transcript('cl-3'), 'utf8')).toMatch(/t1 open normal - \d+s write the parser/);
      const shown = JSON.parse((await f.flotilla(['task', 'show', 't1', '--json'])).stdout) as Task;
      expect(shown).toMatchObject({ status: 'done', claimed_by: 'cl-3' });
      expect(shown.result).toContain('claimed and read: You claimed task t1.');
      expect(existsSync(f.layout.board('fleet').dir)).toBe(false);
    } finally {
      await f?.close();
      f = undefined;
      await server.kill();
    }
  });

  it('a model told the task is taken sees who holds it', async () => {
    f = spawnFleet();
    define('claimer', 'tool-claimer.yaml');
    await f.flotilla(['task', 'add', 'write the parser']);
    expect((await f.flotilla(['task', 'claim', 't1'])).exitCode).toBe(0);
    const run = await f.spawnAgent(['--agent', 'claimer', '--id', 'cl-2', '--wait', 'take the board work']);
    expect(run.stdout).toMatch(
      /^Told: Refused: task t1 is already claimed by human \(since \S+\)\. Call task_claim without an id/,
    );
    expect(task('t1')).toMatchObject({ status: 'claimed', claimed_by: 'human' });
  });

  it(
    '20 harnesses claim one task through task_claim at once: exactly one wins, the 19 others are told the holder',
    { timeout: 900_000 },
    async () => {
      f = spawnFleet({ config: 'limits:\n  max_running: 24\n' });
      define('racer', 'racer.yaml');
      await f.flotilla(['task', 'add', 'the one task']);
      const ids = Array.from({ length: 20 }, (_, i) => `racer-${i}`);
      for (const id of ids)
        expect((await f.spawnAgent(['--agent', 'racer', '--id', id, 'race for t1'])).exitCode).toBe(0);
      // Agents in windows stay when their task ends (a background one is headless, one task), so
      // the winner's claim lasts. Every model is in its first tool call, waiting: then all claim at once.
      await eventually(
        () => readdirSync(f!.project).filter((n) => n.startsWith('ready.')).length === 20,
        600_000,
        'all 20 racers ready',
      );
      writeFileSync(join(f.project, 'go'), '');
      const answers = await eventually(
        () => {
          const got = ids.map(answer);
          return got.every((a) => a !== undefined) && (got as string[]);
        },
        300_000,
        'every racer to answer',
      );
      const winners = ids.filter((_, i) => answers[i]!.startsWith('You claimed task t1.'));
      expect(winners).toHaveLength(1);
      const holder = winners[0]!;
      expect(task('t1')).toMatchObject({ status: 'claimed', claimed_by: holder });
      for (const [i, id] of ids.entries()) {
        if (id === holder) continue;
        expect(answers[i]).toMatch(new RegExp(`^Refused: task t1 is already claimed by ${holder} \\(since \\S+\\)\\.`));
      }
      const claims = readFileSync(f.layout.auditFile, 'utf8')
        .split('\n')
        .filter((l) => l.includes('"event":"task_claimed"'));
      expect(claims).toHaveLength(1);
    },
  );

  it("/task add and /tasks typed in an agent's pane act for the person", async () => {
    f = spawnFleet();
    define('idler', 'idler.yaml');
    expect((await f.spawnAgent(['--agent', 'idler', '--id', 'id-1', 'wait here'])).exitCode).toBe(0);
    await eventually(() => f!.record('id-1').status === 'idle', 60_000, 'id-1 idle');
    const pane = f.record('id-1').tmux!.paneId;
    await f.tmux.tmux('send-keys', '-t', pane, '-l', '/task add write the release notes');
    await f.tmux.tmux('send-keys', '-t', pane, 'Enter');
    await eventually(() => readTask(f!.layout.board('fleet'), 't1'), 30_000, 't1 added from the pane');
    expect(task('t1')).toMatchObject({ title: 'write the release notes', created_by: 'human', status: 'open' });
    await f.tmux.tmux('send-keys', '-t', pane, '-l', '/tasks');
    await f.tmux.tmux('send-keys', '-t', pane, 'Enter');
    await f.tmux.waitFor(pane, /t1\s+open\s+normal\s+-\s+\d+s\s+write the release notes/, 30_000);
    await f.tmux.tmux('send-keys', '-t', pane, '-l', '/task done t1 shipped');
    await f.tmux.tmux('send-keys', '-t', pane, 'Enter');
    await eventually(() => task('t1').status === 'done', 30_000, 't1 done from the pane');
    expect(task('t1').result).toBe('shipped');
    // The model never saw a chat command: one task (the spawn's), no more turns.
    expect(f.record('id-1').task).toBe(1);
  });
});
