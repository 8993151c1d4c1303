import { execa } from 'execa';
import { afterEach, describe, expect, it } from 'vitest';
import { fixture, spawnFleet, type SpawnFleet } from '../spawn/helpers.js';

// End-to-end: a worktree agent of our harness commits under the default sandbox (bubblewrap here).
let f: SpawnFleet | undefined;
afterEach(async () => {
  await f?.close();
  f = undefined;
});

describe('an agent in its worktree', () => {
  it('commits inside the default sandbox, on its own branch, authored by its id', async () => {
    f = spawnFleet();
    const git = (...a: string[]) => execa('git', a, { cwd: f!.project });
    await git('init', '-q', '-b', 'main');
    await git('add', 'README');
    await git('-c', 'user.email=p@example.com', '-c', 'user.name=person', 'commit', '-q', '-m', 'init');
    const r = await f.spawnAgent(['--worktree', '--wait', '--id', 'fixer', '--model', `script:${fixture('committer.yaml')}`, 'fix a.txt']);
    expect(r.stdout).toContain('Answer: fixer <fixer@flotilla> fix a');
    expect(r.exitCode).toBe(0);
    expect((await git('log', '-1', '--format=%an <%ae> %s', 'flotilla/fixer')).stdout).toBe('fixer <fixer@flotilla> fix a');
    expect((await git('log', '-1', '--format=%s', 'main')).stdout).toBe('init');
    expect((await execa('git', ['status', '--porcelain'], { cwd: f.layout.worktree('fixer') })).stdout).toBe('');
  });
});
