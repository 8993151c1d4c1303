import { execa, type ResultPromise } from 'execa';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { isProcessAlive, processStartTime } from '../../src/fleet/proc.js';
import { createRecord } from '../../src/fleet/registry.js';
import { readTask } from '../../src/tasks/store.js';
import type { Task } from '../../src/tasks/task.js';
import { CLI } from '../helpers/cli.js';
import { recordInput } from '../helpers/records.js';
import { eventually } from '../helpers/tmux.js';
import { spawnFleet, type SpawnFleet } from '../spawn/helpers.js';
import { holderFleet } from './holder.js';

/**
 * `flotilla task …` as agents and people run it (§15): real CLI processes, each acting as the
 * agent among its ancestors (a registered `sh`), racing on one board.
 */

let f: SpawnFleet | undefined;
const procs: ResultPromise[] = [];
afterEach(async () => {
  for (const p of procs.splice(0)) p.kill('SIGKILL');
  await f?.close();
  f = undefined;
});

const task = (id: string, board = 'fleet'): Task => readTask(f!.layout.board(board), id)!;

/**
 * `n` agents: each a real `sh` registered as a live harness (pid and start time), which waits
 * for `go` in the project, runs `script` with $ME set to its id, writes `rc.$ME`, and stays
 * alive (its claims with it) until the test is over. `finished` resolves once every script has run.
 */
async function agents(n: number, script: string): Promise<{ ids: string[]; go(): void; finished(): Promise<void> }> {
  const ids = Array.from({ length: n }, (_, i) => `w-${i}`);
  for (const id of ids) {
    const p = execa(
      'sh',
      [
        '-c',
        `while [ ! -e go ]; do sleep 0.05; done; ${script}; echo $? > rc.$ME.tmp; mv rc.$ME.tmp rc.$ME; while [ ! -e end ]; do sleep 0.2; done`,
      ],
      {
        cwd: f!.project,
        env: { ...f!.env, ME: id, FLOTILLA_AGENT_ID: id, F: `${process.execPath} ${CLI}` },
        extendEnv: false,
        reject: false,
        stdin: 'ignore',
      },
    );
    procs.push(p);
    createRecord(
      f!.layout,
      recordInput(id, { status: 'working', pid: p.pid!, pidStartTime: processStartTime(p.pid!), cwd: f!.project }),
    );
  }
  return {
    ids,
    go: () => writeFileSync(join(f!.project, 'go'), ''),
    finished: async () => {
      await eventually(
        () => ids.every((id) => existsSync(join(f!.project, `rc.${id}`))),
        600_000,
        'every agent to run its script',
      );
    },
  };
}

describe('flotilla task (§15)', () => {
  it('20 agents claim one task at once: exactly one wins, the 19 others are refused naming the holder', async () => {
    f = spawnFleet();
    expect((await f.flotilla(['task', 'add', 'the one task'])).stdout).toBe('t1');
    const crowd = await agents(20, '$F task claim t1 > out.$ME 2> err.$ME');
    crowd.go();
    await crowd.finished();
    const rc = (id: string) => readFileSync(join(f!.project, `rc.${id}`), 'utf8').trim();
    const winners = crowd.ids.filter((id) => rc(id) === '0');
    expect(winners).toHaveLength(1);
    const holder = winners[0]!;
    expect(task('t1')).toMatchObject({ status: 'claimed', claimed_by: holder });
    for (const id of crowd.ids.filter((x) => x !== holder)) {
      expect(rc(id)).toBe('1');
      expect(readFileSync(join(f.project, `err.${id}`), 'utf8')).toContain(`task t1 is already claimed by ${holder}`);
    }
    const claims = readFileSync(f.layout.auditFile, 'utf8')
      .split('\n')
      .filter((l) => l.includes('"event":"task_claimed"'));
    expect(claims).toHaveLength(1);
  });

  it(
    'agents drain a board with claim --next: every task done exactly once, by the agent that claimed it',
    { timeout: 600_000 },
    async () => {
      // Five CLI agents and 40 tasks: each step is two node starts. The 20 × 200 crowd runs as real harnesses
      // (harness-team.test.ts).
      f = spawnFleet();
      const board = f.layout.board('drain');
      // Added in-process to keep the test to the crowd it is about.
      const { addTask } = await import('../../src/tasks/board.js');
      for (let i = 0; i < 40; i++)
        await addTask(
          f.layout,
          'drain',
          { title: `job ${i}`, ...(i % 10 === 9 ? { blockedBy: [`t${i}`] } : {}) },
          'human',
        );
      const crowd = await agents(
        5,
        'while id=$($F task claim --next --board drain 2>/dev/null); do $F task done --board drain "$id" "by $ME" || break; echo "$id" >> did.$ME; done',
      );
      crowd.go();
      await crowd.finished();
      const did = crowd.ids.flatMap((id) =>
        existsSync(join(f!.project, `did.${id}`))
          ? readFileSync(join(f!.project, `did.${id}`), 'utf8')
              .trim()
              .split('\n')
              .map((t) => ({ t, id }))
          : [],
      );
      expect(did).toHaveLength(40);
      expect(new Set(did.map((d) => d.t)).size).toBe(40);
      for (const { t, id } of did)
        expect(readTask(board, t)).toMatchObject({ status: 'done', claimed_by: id, result: `by ${id}` });
      const audit = readFileSync(f.layout.auditFile, 'utf8');
      expect(audit.match(/"event":"task_claimed"/g)).toHaveLength(40);
      expect(audit.match(/"event":"task_done"/g)).toHaveLength(40);
      // Dependencies held under the crowd: each dependent finished after its blocker.
      for (let i = 9; i < 40; i += 10)
        expect(Date.parse(readTask(board, `t${i + 1}`)!.claimed_at!)).toBeGreaterThanOrEqual(
          Date.parse(readTask(board, `t${i}`)!.finished_at!),
        );
      const list = await f.flotilla(['task', 'list', '--board', 'drain', '--json']);
      expect(JSON.parse(list.stdout).counts).toEqual({ open: 0, claimed: 0, done: 40, failed: 0, cancelled: 0 });
      expect((await f.flotilla(['task', 'wait', '--board', 'drain'])).exitCode).toBe(0);
    },
  );

  it('a claimant killed with SIGKILL: its task is reopened with a note of who had it', async () => {
    f = spawnFleet();
    const script = fileURLToPath(new URL('../fixtures/tasks/claimer.yaml', import.meta.url));
    writeFileSync(
      join(f.layout.agentsDir, 'claimer.md'),
      `---\nname: claimer\ndescription: claims t1\nmodel: script:${script}\n---\nYou claim.\n`,
    );
    await f.flotilla(['task', 'add', 'held work']);
    expect((await f.spawnAgent(['--agent', 'claimer', '--id', 'cl-1', 'claim it'])).exitCode).toBe(0);
    await eventually(() => task('t1').claimed_by === 'cl-1', 60_000, 'cl-1 to claim t1');
    process.kill(f.record('cl-1').pid!, 'SIGKILL');
    // tmux built with libutempter can miss the pane's death until it gets another SIGCHLD (as in crash.test.ts).
    const open = await eventually(
      async () => {
        await f!.tmux.nudge();
        return task('t1').status === 'open' && task('t1');
      },
      60_000,
      't1 to be reopened',
    ).catch((err: unknown) => {
      throw new Error(
        `${String(err)}; record: ${f!.record('cl-1').status}; audit: ${readFileSync(f!.layout.auditFile, 'utf8')
          .split('\n')
          .filter((l) => /reap|task_/.test(l))
          .join(' | ')}`,
      );
    });
    expect(open.claimed_by).toBeNull();
    expect(open.notes.at(-1)!.text).toMatch(
      /^reopened: its claimant cl-1 ended \((killed \(SIGKILL\)|process died)\)$/,
    );
    // Open means claimable: a person takes it over.
    expect((await f.flotilla(['task', 'claim', 't1'])).exitCode).toBe(0);
    writeFileSync(join(f.project, 'release'), '');
  });

  it('a background claimant SIGKILLed: task list, task show, lease list and claim --next see it gone at once, with no writer', async () => {
    f = holderFleet();
    await f.flotilla(['task', 'add', 'held work']);
    expect((await f.spawnAgent(['--agent', 'holder', '--id', 'bg-1', '--background', 'claim it'])).exitCode).toBe(0);
    const leaseOut = join(f.project, 'lease.bg-1');
    await eventually(
      () => existsSync(leaseOut) && readFileSync(leaseOut, 'utf8').includes('leased'),
      60_000,
      'bg-1 to claim t1 and lease notes.md',
    );
    expect(task('t1')).toMatchObject({ status: 'claimed', claimed_by: 'bg-1' });
    expect((await f.flotilla(['lease', 'list'])).stdout).toContain('bg-1');
    process.kill(f.record('bg-1').pid!, 'SIGKILL');
    await eventually(() => !isProcessAlive(f!.record('bg-1').pid!), 10_000, 'the harness to be gone');
    // No tmux pane, so no reaper: the board's file still names bg-1. The reads judge it themselves.
    const list = JSON.parse((await f.flotilla(['task', 'list', '--json'])).stdout) as {
      counts: { open: number; claimed: number };
      tasks: Task[];
    };
    expect(list.counts).toMatchObject({ open: 1, claimed: 0 });
    expect(list.tasks[0]).toMatchObject({ id: 't1', status: 'open', claimed_by: null });
    const shown = (await f.flotilla(['task', 'show', 't1'])).stdout;
    expect(shown).toContain('status:     open');
    expect(shown).toContain('reopened: its claimant bg-1 died (its process is gone)');
    expect((await f.flotilla(['lease', 'list'])).stdout).not.toContain('bg-1');
    expect(task('t1')).toMatchObject({ status: 'claimed', claimed_by: 'bg-1' });
    // The next writer makes it so: claim --next takes it.
    expect((await f.flotilla(['task', 'claim', '--next'])).stdout).toBe('t1');
    expect(task('t1')).toMatchObject({ status: 'claimed', claimed_by: 'human' });
    writeFileSync(join(f.project, 'release'), '');
  });

  it('a claimant whose window is closed: its task is reopened with a note of who had it', async () => {
    f = spawnFleet();
    const script = fileURLToPath(new URL('../fixtures/tasks/claimer.yaml', import.meta.url));
    writeFileSync(
      join(f.layout.agentsDir, 'claimer.md'),
      `---\nname: claimer\ndescription: claims t1\nmodel: script:${script}\n---\nYou claim.\n`,
    );
    await f.flotilla(['task', 'add', 'held work']);
    expect((await f.spawnAgent(['--agent', 'claimer', '--id', 'cl-2', 'claim it'])).exitCode).toBe(0);
    await eventually(() => task('t1').claimed_by === 'cl-2', 60_000, 'cl-2 to claim t1');
    // A person closes the agent's window (tmux kill-window), as from the dashboard or a tmux key.
    await f.tmux.tmux('kill-window', '-t', f.record('cl-2').tmux!.windowId);
    const open = await eventually(
      async () => {
        await f!.tmux.nudge();
        return task('t1').status === 'open' && task('t1');
      },
      60_000,
      't1 to be reopened',
    );
    expect(open.claimed_by).toBeNull();
    expect(open.notes.at(-1)!.text).toMatch(
      /^reopened: its claimant cl-2 (ended \(.+\)|died \(its process is gone\))$/,
    );
    expect((await f.flotilla(['task', 'claim', 't1'])).exitCode).toBe(0);
    writeFileSync(join(f.project, 'release'), '');
  });

  it('exit codes, JSON and refusals as elsewhere: 0 done, 1 refused, 2 usage', async () => {
    f = spawnFleet();
    const add = await f.flotilla([
      'task',
      'add',
      'parse',
      '--json',
      '--priority',
      'high',
      '--labels',
      'a,b',
      '--body',
      'the details',
    ]);
    expect(add.exitCode).toBe(0);
    expect(JSON.parse(add.stdout)).toMatchObject({
      id: 't1',
      title: 'parse',
      priority: 'high',
      labels: ['a', 'b'],
      created_by: 'human',
      status: 'open',
    });
    expect((await f.flotilla(['task', 'add', 'b', '--id', 'b', '--blocked-by', 'c'])).exitCode).toBe(0);
    const cycle = await f.flotilla(['task', 'add', 'c', '--id', 'c', '--blocked-by', 'b']);
    expect(cycle.exitCode).toBe(1);
    expect(cycle.stderr).toContain('cycle c → b → c');
    expect((await f.flotilla(['task', 'claim', 'b'])).stderr).toContain('blocked by unfinished c');
    const usage = await f.flotilla(['task', 'claim']);
    expect(usage.exitCode).toBe(2);
    expect(usage.stderr).toContain('--next');
    expect((await f.flotilla(['task', 'add', 'x', '--priority', 'huge'])).exitCode).toBe(2);
    expect((await f.flotilla(['task', 'frob'])).exitCode).toBe(2);
    expect((await f.flotilla(['task', 'show', 'zz'])).exitCode).toBe(1);
    // A person may finish any unfinished task; an agent only its own claim.
    const crowd = await agents(1, '$F task done t1 "mine" 2> err.$ME');
    crowd.go();
    await crowd.finished();
    expect(readFileSync(join(f.project, 'rc.w-0'), 'utf8').trim()).toBe('1');
    expect(readFileSync(join(f.project, 'err.w-0'), 'utf8')).toContain(
      'only whoever claims it or a person may mark done task t1',
    );
    const done = await f.flotilla(['task', 'done', 't1', 'parsed', 'it']);
    expect(done.stdout).toBe('t1 done');
    const show = await f.flotilla(['task', 'show', 't1']);
    expect(show.stdout).toContain('result:\nparsed it');
    // The board still waits on b (waiting on c): with nothing claimable, wait ends at once, exit 1.
    const wait = await f.flotilla(['task', 'wait']);
    expect(wait.exitCode).toBe(1);
    expect(wait.stderr).toContain('b can never be claimed');
  });
});
