import { afterEach, describe, expect, it } from 'vitest';
import { deliver } from '../../src/inbox/deliver.js';
import { eventually } from '../helpers/tmux.js';
import { fixture, spawnFleet, type SpawnFleet } from './helpers.js';

let f: SpawnFleet | undefined;
afterEach(async () => {
  await f?.close();
  f = undefined;
});

describe('flotilla status / wait / gc', () => {
  it('status shows the tree with unread mail; --json gives records with unread; wait prints results', async () => {
    f = spawnFleet({ definitions: { lead: 'lead-two.yaml', worker: 'worker.yaml' } });
    expect((await f.spawnAgent(['--wait', '--agent', 'lead', '--id', 'lead-s', 'go'])).exitCode).toBe(0);
    await deliver(f.layout, { from: 'human', to: 'w-alpha', kind: 'message', body: 'ping 1' });
    // w-alpha is idle and will surface it; a finished oneshot agent's mail stays unread.
    const one = await f.spawnAgent([
      '--wait',
      '--oneshot',
      '--id',
      'solo',
      '--model',
      `script:${fixture('worker.yaml')}`,
      'x',
    ]);
    expect(one.exitCode).toBe(0);
    await deliver(f.layout, { from: 'human', to: 'solo', kind: 'message', body: 'nobody reads this' });
    // Let the fleet settle first: w-alpha answers the ping as its second task, and lead-s its
    // completion as its own second one. On a slow machine status could otherwise catch either
    // mid-task, and wait (which takes the task current when it starts) report w-alpha's first.
    const second = (id: string) => (f!.record(id).lastTask?.task ?? 0) >= 2 && f!.record(id).status === 'idle';
    await eventually(() => second('w-alpha') && second('lead-s'), 60_000, 'w-alpha and lead-s to answer their mail');
    const s = await f.flotilla(['status']);
    expect(s.exitCode).toBe(0);
    const lines = s.stdout.split('\n');
    expect(lines[0]).toMatch(/^AGENT\s+STATE\s+DEPTH\s+TURNS/);
    expect(lines[1]).toMatch(/^lead-s\s+idle\s+0\s+\d+\/20/);
    expect(lines[2]).toMatch(/^ {2}w-alpha\s+(idle|working)\s+1\s/);
    expect(lines[3]).toMatch(/^ {2}w-beta\s+idle\s+1\s/);
    expect(lines[4]).toMatch(/^solo\s+completed\s+0\s.*\s1\s+\[scripted\] Answer: result-of-solo$/);
    const json = JSON.parse((await f.flotilla(['status', '--json'])).stdout) as {
      id: string;
      unread: number;
      status: string;
    }[];
    expect(json.map((r) => r.id)).toEqual(['lead-s', 'w-alpha', 'w-beta', 'solo']);
    expect(json.find((r) => r.id === 'solo')!.unread).toBe(1);
    const w = await f.flotilla(['wait', 'w-al', 'solo']);
    expect(w.exitCode).toBe(0);
    // w-alpha took the ping as a second task: wait reports the latest one.
    expect(w.stdout).toContain('## w-alpha: completed\nnoted');
    expect(w.stdout).toContain('## solo: completed\nAnswer: result-of-solo');
    const ls = await f.flotilla(['ls']);
    expect(ls.exitCode).toBe(0);
    expect(ls.stdout.split('\n').map((l) => l.split(/\s+/)[0] || l.trim().split(/\s+/)[0])).toEqual(
      s.stdout.split('\n').map((l) => l.split(/\s+/)[0] || l.trim().split(/\s+/)[0]),
    );
  });

  it('wait --timeout gives up with exit 1 and names what is still running', async () => {
    f = spawnFleet();
    await f.spawnAgent(['--id', 'slow', '--model', `script:${fixture('sleeper.yaml')}`, 'sleep']);
    const w = await f.flotilla(['wait', '--timeout', '1', 'slow']);
    expect(w.exitCode).toBe(1);
    expect(w.stderr).toBe('flotilla: still running after 1 s: slow');
  });

  it('gc kills dead panes of finished agents and removes their records and markers', async () => {
    f = spawnFleet();
    expect(
      (await f.spawnAgent(['--wait', '--oneshot', '--id', 'done1', '--model', `script:${fixture('worker.yaml')}`, 'x']))
        .exitCode,
    ).toBe(0);
    // The harness exits after its record ends; on a loaded machine that can take a while, and
    // tmux may need a SIGCHLD to notice (nudge).
    await eventually(
      async () => {
        await f!.tmux.nudge();
        return (
          (await f!.tmux.tmux('display-message', '-p', '-t', f!.record('done1').tmux!.paneId, '#{pane_dead}')) === '1'
        );
      },
      30_000,
      'dead pane',
    );
    await f.spawnAgent(['--id', 'alive', '--model', `script:${fixture('sleeper.yaml')}`, 'sleep']);
    const r = await f.flotilla(['gc', '--json']);
    const out = JSON.parse(r.stdout) as { records: string[]; panes: string[] };
    expect(out.records).toEqual(['done1']);
    expect(out.panes).toHaveLength(1);
    expect(await f.windows()).toEqual(['alive']);
    expect(f.records().map((x) => x.id)).toEqual(['alive']);
  });
});
