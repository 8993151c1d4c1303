import { readFileSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { reopenClaimsOf } from '../../src/tasks/board.js';
import { flotilla } from '../helpers/cli.js';
import { tempFleet, type TempFleet } from '../helpers/fleet.js';

/**
 * `flotilla status` counts each board's tasks (docs/design.md §15), as text and in --json; and
 * every claim, release, reopen and ending a person makes is one audit line.
 */

let fleet: TempFleet | undefined;
afterEach(() => fleet?.cleanup());

const run = async (args: string[]) => {
  const r = await flotilla(args, { cwd: fleet!.project, env: { FLOTILLA_ROOT: fleet!.layout.root } });
  return { exitCode: r.exitCode ?? -1, stdout: String(r.stdout), stderr: String(r.stderr) };
};

describe('task boards in status', () => {
  it('status shows open / claimed / done counts per board, and --json has one entry per board', async () => {
    fleet = tempFleet();
    for (const title of ['one', 'two', 'three', 'four']) expect((await run(['task', 'add', title])).exitCode).toBe(0);
    expect((await run(['task', 'add', '--board', 'api', 'the api'])).exitCode).toBe(0);
    expect((await run(['task', 'claim', 't1'])).exitCode).toBe(0);
    expect((await run(['task', 'release', 't1', 'not now'])).exitCode).toBe(0);
    expect((await run(['task', 'claim', 't1'])).exitCode).toBe(0);
    expect((await run(['task', 'done', 't1', 'did it'])).exitCode).toBe(0);
    expect((await run(['task', 'claim', 't2'])).exitCode).toBe(0);
    expect((await run(['task', 'cancel', 't4', 'not needed'])).exitCode).toBe(0);

    const text = await run(['status']);
    expect(text.exitCode, text.stderr).toBe(0);
    expect(text.stdout).toContain(
      'Task boards (flotilla task list --board NAME):\n  board api: 1 open, 0 claimed, 0 done, 0 failed, 0 cancelled\n  board fleet: 1 open, 1 claimed, 1 done, 0 failed, 1 cancelled',
    );
    const json = JSON.parse((await run(['status', '--json'])).stdout) as Record<string, unknown>[];
    expect(json.filter((e) => e.status === 'board')).toEqual([
      {
        id: 'board:api',
        status: 'board',
        board: 'api',
        counts: { open: 1, claimed: 0, done: 0, failed: 0, cancelled: 0 },
      },
      {
        id: 'board:fleet',
        status: 'board',
        board: 'fleet',
        counts: { open: 1, claimed: 1, done: 1, failed: 0, cancelled: 1 },
      },
    ]);

    // A claim a person holds lasts until released; an agent's is reopened when it ends (reopen-claims).
    const { claimTask } = await import('../../src/tasks/board.js');
    await claimTask(fleet.layout, 'fleet', 't3', 'worker-abc123');
    await reopenClaimsOf(fleet.layout, 'worker-abc123', 'killed');
    const events = readFileSync(fleet.layout.auditFile, 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as Record<string, unknown>)
      .filter((l) => String(l.event).startsWith('task_') && l.board === 'fleet' && l.event !== 'task_created')
      .map((l) => `${String(l.event)} ${String(l.task)} ${String(l.agent)}`);
    expect(events).toEqual([
      'task_claimed t1 human',
      'task_released t1 human',
      'task_claimed t1 human',
      'task_done t1 human',
      'task_claimed t2 human',
      'task_cancelled t4 human',
      'task_claimed t3 worker-abc123',
      'task_reopened t3 worker-abc123',
    ]);
  });

  it('a fleet without boards shows no board lines', async () => {
    fleet = tempFleet();
    await run(['send', 'human', 'hello']);
    const text = await run(['status']);
    expect(text.stdout).not.toContain('Task boards');
    const json = JSON.parse((await run(['status', '--json'])).stdout) as Record<string, unknown>[];
    expect(json.filter((e) => e.status === 'board')).toEqual([]);
  });
});
