import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { readTask } from '../../src/tasks/store.js';
import type { Task } from '../../src/tasks/task.js';
import { eventually } from '../helpers/tmux.js';
import { spawnFleet, type SpawnFleet } from '../spawn/helpers.js';

/**
 * Teammates (§15 `auto_claim`): real harnesses whose scripted models answer whatever task
 * they are given; the board, the audit and the lead's answer are what they produced.
 */

let f: SpawnFleet | undefined;
afterEach(async () => {
  await f?.close();
  f = undefined;
});

const script = (name: string): string => fileURLToPath(new URL(`../fixtures/tasks/${name}`, import.meta.url));

function define(name: string, yaml: string, extra = ''): void {
  writeFileSync(
    join(f!.layout.agentsDir, `${name}.md`),
    `---\nname: ${name}\ndescription: test agent ${name}\nmodel: script:${script(yaml)}\n${extra}---\nYou are ${name}.\n`,
  );
}

const auditEvents = (event: string): Record<string, string>[] =>
  readFileSync(f!.layout.auditFile, 'utf8')
    .split('\n')
    .filter((l) => l.includes(`"event":"${event}"`))
    .map((l) => JSON.parse(l) as Record<string, string>);

describe('teammates that claim work (§15)', () => {
  it(
    "idle teammates pick up tasks added later and drain the board: each task done once, its result the model's answer to it",
    { timeout: 900_000 },
    async () => {
      f = spawnFleet({ config: 'limits:\n  max_running: 12\n' });
      define('mate', 'mate.yaml', 'auto_claim: true\n');
      const mates = ['m-1', 'm-2', 'm-3', 'm-4'];
      // No task of their own: they start idle, watching an empty board.
      for (const id of mates)
        expect((await f.spawnAgent(['--agent', 'mate', '--id', id, '--board', 'drain'])).exitCode).toBe(0);
      await eventually(() => mates.every((id) => f!.record(id).status === 'idle'), 300_000, 'every teammate idle');
      for (const id of mates) expect(f.record(id)).toMatchObject({ board: 'drain', autoClaim: true, task: 1 });
      const { addTask } = await import('../../src/tasks/board.js');
      const n = 24;
      for (let i = 1; i <= n; i++)
        await addTask(
          f.layout,
          'drain',
          { title: `job ${i}`, body: `details of job ${i}`, ...(i % 6 === 0 ? { blockedBy: [`t${i - 1}`] } : {}) },
          'human',
        );
      const waited = await f.flotilla(['task', 'wait', '--board', 'drain', '--timeout', '600', '--json']);
      expect(waited.exitCode).toBe(0);
      expect(JSON.parse(waited.stdout).counts).toEqual({ open: 0, claimed: 0, done: n, failed: 0, cancelled: 0 });
      const board = f.layout.board('drain');
      const workers = new Set<string>();
      for (let i = 1; i <= n; i++) {
        const t = readTask(board, `t${i}`)!;
        expect(t.status).toBe('done');
        expect(mates).toContain(t.claimed_by);
        workers.add(t.claimed_by!);
        // The model's answer to this task, word for word: it saw this task's title.
        expect(t.result).toBe(`done: Task t${i} from the board 'drain' (you have claimed it): job ${i}`);
      }
      // Exactly once: one claim and one completion per task, nothing reopened. Each harness writes the board, then the
      // audit line: the last task's can come after the wait has returned.
      await eventually(() => auditEvents('task_done').length >= n, 30_000, 'every completion audited');
      expect(
        auditEvents('task_claimed')
          .map((e) => e.task)
          .sort(),
      ).toEqual(Array.from({ length: n }, (_, i) => `t${i + 1}`).sort());
      expect(auditEvents('task_done')).toHaveLength(n);
      expect(auditEvents('task_reopened')).toEqual([]);
      expect(workers.size).toBeGreaterThan(1);
      for (let i = 6; i <= n; i += 6)
        expect(Date.parse(readTask(board, `t${i}`)!.claimed_at!)).toBeGreaterThanOrEqual(
          Date.parse(readTask(board, `t${i - 1}`)!.finished_at!),
        );
      // Still there, idle, between tasks: one more task is picked up too.
      await addTask(f.layout, 'drain', { title: 'one more' }, 'human');
      await eventually(() => readTask(board, `t${n + 1}`)?.status === 'done', 120_000, 'the late task done');
    },
  );

  it(
    "a teammate whose answer the TaskCompleted hook refuses gets the hook's words as mail; its next answer is the result",
    { timeout: 300_000 },
    async () => {
      const gate = 'if [ ! -e gate-once ]; then touch gate-once; echo "add the units" >&2; exit 2; fi';
      f = spawnFleet({ config: `hooks:\n  task_completed:\n    - command: ${JSON.stringify(gate)}\n` });
      define('gated', 'gated-mate.yaml', 'auto_claim: true\n');
      const { addTask } = await import('../../src/tasks/board.js');
      await addTask(f.layout, 'fleet', { title: 'weigh the widgets' }, 'human');
      expect((await f.spawnAgent(['--agent', 'gated', '--id', 'g-1'])).exitCode).toBe(0);
      const board = f.layout.board('fleet');
      await eventually(() => readTask(board, 't1')?.status === 'done', 120_000, 't1 done after the refusal');
      expect(readTask(board, 't1')).toMatchObject({
        status: 'done',
        claimed_by: 'g-1',
        result: 'again: the widgets weigh 126 kg',
      });
      expect(readTask(board, 't1')!.notes.map((n) => n.text)).toEqual(['completion refused: add the units']);
      expect(f.mail('g-1').filter((m) => m.kind === 'system' && (m.body ?? '').includes('add the units'))).toHaveLength(
        1,
      );
      expect(auditEvents('task_refused')).toHaveLength(1);
      // The harness writes the board, then the audit line: the test can read between the two.
      await eventually(() => auditEvents('task_done').length > 0, 30_000, 'the completion audited');
      expect(auditEvents('task_done')).toHaveLength(1);
    },
  );

  it(
    'a task whose run fails is marked failed with why; the teammate goes on to the next',
    { timeout: 300_000 },
    async () => {
      f = spawnFleet();
      define('stumbler', 'stumbler.yaml', 'auto_claim: true\n');
      const { addTask } = await import('../../src/tasks/board.js');
      await addTask(f.layout, 'fleet', { title: 'a task that breaks the model' }, 'human');
      await addTask(f.layout, 'fleet', { title: 'an easy one' }, 'human');
      expect((await f.spawnAgent(['--agent', 'stumbler', '--id', 'st-1'])).exitCode).toBe(0);
      const board = f.layout.board('fleet');
      await eventually(() => readTask(board, 't2')?.status === 'done', 120_000, 't2 done after t1 failed');
      const t1 = readTask(board, 't1')!;
      expect(t1).toMatchObject({ status: 'failed', claimed_by: 'st-1' });
      expect(t1.result).toMatch(/^the run ended failed \(.*provider on fire.*\)/);
      expect(readTask(board, 't2')!.result).toBe(
        "fine: Task t2 from the board 'fleet' (you have claimed it): an easy one",
      );
    },
  );

  it(
    'a lead spawns teammates, plans the work on its board, and wait_for_tasks returns once it has drained',
    { timeout: 900_000 },
    async () => {
      f = spawnFleet({ config: 'limits:\n  max_running: 8\n' });
      define('mate', 'mate.yaml', 'auto_claim: true\n');
      define('lead', 'lead.yaml');
      const run = await f.spawnAgent([
        '--agent',
        'lead',
        '--id',
        'lead-1',
        '--board',
        'team',
        '--wait',
        'run the team',
      ]);
      expect(run.stderr).toBe('');
      expect(run.exitCode).toBe(0);
      // The wait returned on a drained board, not before.
      // (A teammate's completion surfaced after it in the same turn is noted first: lead.yaml.)
      expect(run.stdout).toMatch(
        /^(Noted the mail\. )?Team result: The board has drained\. board team: 0 open, 0 claimed, 6 done, 0 failed, 0 cancelled$/,
      );
      const board = f.layout.board('team');
      for (let i = 1; i <= 6; i++) {
        const t: Task = readTask(board, `t${i}`)!;
        expect(t).toMatchObject({
          status: 'done',
          created_by: 'lead-1',
          result: `done: Task t${i} from the board 'team' (you have claimed it): part ${i}`,
        });
        expect(['mate-a', 'mate-b', 'mate-c']).toContain(t.claimed_by);
      }
      // The teammates are the lead's children on its board.
      for (const id of ['mate-a', 'mate-b', 'mate-c'])
        expect(f.record(id)).toMatchObject({ parentId: 'lead-1', board: 'team', autoClaim: true });
    },
  );
});
