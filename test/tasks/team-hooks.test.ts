import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { readTask } from '../../src/tasks/store.js';
import { scriptCalls, type LoggedCall } from '../helpers/scripts.js';
import { eventually } from '../helpers/tmux.js';
import { spawnFleet, type SpawnFleet } from '../spawn/helpers.js';

/**
 * The team hooks (docs/hooks.md "Team hooks"): TaskCreated, TaskCompleted and TeammateIdle
 * from a trusted project's config, run by the board's operations and the harness as real
 * `sh` commands; agents are real harnesses on the scripted model in a private tmux server.
 */

let f: SpawnFleet | undefined;
afterEach(async () => {
  await f?.close();
  f = undefined;
});

const envOf = (file: string): Record<string, string> =>
  Object.fromEntries(
    readFileSync(file, 'utf8')
      .split('\n')
      .filter((l) => l.includes('='))
      .map((l) => [l.slice(0, l.indexOf('=')), l.slice(l.indexOf('=') + 1)]),
  );
const auditLines = (): Record<string, unknown>[] =>
  existsSync(f!.layout.auditFile)
    ? readFileSync(f!.layout.auditFile, 'utf8')
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l) as Record<string, unknown>)
    : [];
/** Everything one agent's model was shown, call by call (its harness's pid). */
const shown = (log: string, pid: number | null): string[] =>
  scriptCalls(log)
    .filter((c: LoggedCall) => c.pid === pid)
    .map((c) => JSON.stringify(c.prompt));

describe('team hooks (§9, §15)', () => {
  it(
    'a TaskCompleted hook that exits 2 keeps the task claimed, and the claimant sees its stderr — from its own done, and as mail when a person tries',
    { timeout: 300_000 },
    async () => {
      const gate = `cat > completed.$FLOTILLA_TASK_ID.json; [ -e tests-pass ] || { echo "2 tests fail in parser.test.ts: fix them first" >&2; exit 2; }`;
      f = spawnFleet({
        definitions: { claimer: 'hook-claimer.yaml' },
        config: `hooks:\n  task_completed:\n    - command: ${JSON.stringify(gate)}\n`,
      });
      expect((await f.flotilla(['task', 'add', 'write the parser'])).exitCode).toBe(0);
      const log = join(f.project, 'calls.jsonl');
      const r = await f.spawnAgent(['--agent', 'claimer', '--id', 'cl', 'take t1'], { FLOTILLA_SCRIPT_LOG: log });
      expect(r.exitCode, r.stderr).toBe(0);

      await eventually(() => f!.record('cl').lastTask?.status === 'completed', 120_000, "the claimer's first task");
      const pid = f.record('cl').pid;
      // Its model saw the refusal and the hook's words in the shell's result.
      expect(
        shown(log, pid).some((p) =>
          p.includes('the TaskCompleted hook kept task t1 open: 2 tests fail in parser.test.ts: fix them first'),
        ),
      ).toBe(true);
      const board = f.layout.board('fleet');
      expect(readTask(board, 't1')).toMatchObject({ status: 'claimed', claimed_by: 'cl', result: null });
      expect(readTask(board, 't1')!.notes.map((n) => n.text)).toEqual([
        'completion refused: 2 tests fail in parser.test.ts: fix them first',
      ]);
      const payload = JSON.parse(readFileSync(join(f.project, 'completed.t1.json'), 'utf8')) as {
        hook_event_name: string;
        agent_id: string;
        board: string;
        task: { id: string; status: string; result: string };
      };
      expect(payload).toMatchObject({
        hook_event_name: 'TaskCompleted',
        agent_id: 'cl',
        board: 'fleet',
        task: { id: 't1', status: 'done', result: 'parser written' },
      });

      // A person marks it done: refused too, and the claimant is told by mail.
      const person = await f.flotilla(['task', 'done', 't1', 'looks fine']);
      expect(person.exitCode).toBe(1);
      expect(person.stderr).toContain('2 tests fail in parser.test.ts');
      await eventually(
        () =>
          shown(log, pid).some(
            (p) =>
              p.includes('<inbox-message') &&
              p.includes('marked task t1') &&
              p.includes('2 tests fail in parser.test.ts'),
          ),
        120_000,
        'the claimant shown the refusal as mail',
      );
      expect(readTask(board, 't1')).toMatchObject({ status: 'claimed', claimed_by: 'cl' });

      // Once the hook is satisfied the completion goes through.
      writeFileSync(join(f.project, 'tests-pass'), '');
      const ok = await f.flotilla(['task', 'done', 't1', 'looks fine']);
      expect(ok.exitCode, ok.stderr).toBe(0);
      expect(readTask(board, 't1')).toMatchObject({ status: 'done', result: 'looks fine' });
      const audit = auditLines();
      expect(audit.filter((l) => l.event === 'task_refused' && l.task === 't1')).toHaveLength(2);
      expect(
        audit.filter((l) => l.event === 'hook_run' && l.hook === 'TaskCompleted' && l.blocked === true),
      ).toHaveLength(2);
      expect(audit.filter((l) => l.event === 'task_done' && l.task === 't1')).toHaveLength(1);
    },
  );

  it('TaskCreated runs with the documented environment and the task on stdin; what it answers changes nothing', async () => {
    const hook = 'env > created.$FLOTILLA_TASK_ID.env; cat > created.$FLOTILLA_TASK_ID.json; exit 2';
    f = spawnFleet({ config: `hooks:\n  task_created:\n    - command: ${JSON.stringify(hook)}\n` });
    const r = await f.flotilla(['task', 'add', '--board', 'api', '--labels', 'parser', 'write the parser'], {
      SECRET_TOKEN: 'hunter2',
    });
    expect(r.exitCode, r.stderr).toBe(0);
    expect(readTask(f.layout.board('api'), 't1')).toMatchObject({ status: 'open' });
    const env = envOf(join(f.project, 'created.t1.env'));
    expect(
      Object.keys(env)
        .filter((k) => k !== 'PWD')
        .sort(),
    ).toEqual(['FLOTILLA_AGENT_ID', 'FLOTILLA_AGENT_NAME', 'FLOTILLA_BOARD', 'FLOTILLA_TASK_ID', 'PATH']);
    expect(env).toMatchObject({
      FLOTILLA_AGENT_ID: 'human',
      FLOTILLA_AGENT_NAME: 'human',
      FLOTILLA_BOARD: 'api',
      FLOTILLA_TASK_ID: 't1',
    });
    expect(env.PWD).toBe(f.project);
    const payload = JSON.parse(readFileSync(join(f.project, 'created.t1.json'), 'utf8')) as Record<string, unknown>;
    expect(payload).toMatchObject({
      hook_event_name: 'TaskCreated',
      agent_id: 'human',
      board: 'api',
      task: { id: 't1', title: 'write the parser', labels: ['parser'], created_by: 'human' },
    });
    expect(auditLines().filter((l) => l.event === 'hook_run' && l.hook === 'TaskCreated')).toEqual([
      expect.objectContaining({ exit_code: 2, board: 'api', task: 't1' }),
    ]);
  });

  it(
    'TeammateIdle runs when a persistent agent goes idle, with its identity; exit 2 gives it the stderr as its next task',
    { timeout: 300_000 },
    async () => {
      const hook =
        'env > idle.env; cat > idle.json; echo run >> idle.log; if [ ! -e idle-once ]; then touch idle-once; echo "review docs/api.md next" >&2; exit 2; fi';
      f = spawnFleet({
        definitions: { worker: 'idle-worker.yaml' },
        config: `hooks:\n  teammate_idle:\n    - command: ${JSON.stringify(hook)}\n`,
      });
      const log = join(f.project, 'calls.jsonl');
      const r = await f.spawnAgent(['--agent', 'worker', '--id', 'wk', 'do the first thing'], {
        FLOTILLA_SCRIPT_LOG: log,
        SECRET_TOKEN: 'hunter2',
      });
      expect(r.exitCode, r.stderr).toBe(0);
      const pid = () => f!.record('wk').pid;
      await eventually(
        () => shown(log, pid()).some((p) => p.includes('<inbox-message') && p.includes('review docs/api.md next')),
        120_000,
        'the hook’s words shown to the model as mail',
      );
      await eventually(
        () => f!.record('wk').lastTask?.task === 2 && f!.record('wk').lastTask?.status === 'completed',
        120_000,
        'the second task done',
      );
      // Idle again after the second task: the hook ran once per idle spell, and now lets it rest.
      await eventually(
        () => readFileSync(join(f!.project, 'idle.log'), 'utf8') === 'run\nrun\n',
        120_000,
        'the hook run after each task',
      );
      const env = envOf(join(f.project, 'idle.env'));
      expect(
        Object.keys(env)
          .filter((k) => k !== 'PWD')
          .sort(),
      ).toEqual(['FLOTILLA_AGENT_ID', 'FLOTILLA_AGENT_NAME', 'PATH']);
      expect(env).toMatchObject({ FLOTILLA_AGENT_ID: 'wk', FLOTILLA_AGENT_NAME: 'worker' });
      expect(readFileSync(join(f.project, 'idle.env'), 'utf8')).not.toContain('hunter2');
      const payload = JSON.parse(readFileSync(join(f.project, 'idle.json'), 'utf8')) as Record<string, unknown>;
      expect(payload).toMatchObject({
        hook_event_name: 'TeammateIdle',
        agent_id: 'wk',
        last_task: { task: 2, status: 'completed' },
      });
      const mail = f.mail('wk').filter((m) => (m.body ?? '').includes('review docs/api.md next'));
      expect(mail).toEqual([expect.objectContaining({ from: 'human', kind: 'system' })]);
    },
  );
});
