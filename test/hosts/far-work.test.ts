import { execa } from 'execa';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { eventually } from '../helpers/tmux.js';
import { hostsOnBus } from './helpers.js';

/**
 * Work an agent left on another host, reviewed and merged here (docs/design.md §12, §17.7):
 * two hosts on one real nats-server, r1 reached only through a real sshd; r1's project is a
 * clone of this one, as two machines' checkouts of one repository are. An agent on r1 commits
 * on its own branch there; `flotilla review` here lists it as r1 sees it, and `flotilla merge`
 * brings its branch over ssh and merges it into this checkout.
 */
const hosts = hostsOnBus();

const PERSON = {
  GIT_AUTHOR_NAME: 'person',
  GIT_AUTHOR_EMAIL: 'p@example.com',
  GIT_COMMITTER_NAME: 'person',
  GIT_COMMITTER_EMAIL: 'p@example.com',
};

/**
 * This project made a repository with one commit, and r1's project its clone (its main this main), as two machines'
 * checkouts are.
 */
async function sameRepository(here: string, there: string): Promise<void> {
  const git = (cwd: string, ...a: string[]) => execa('git', a, { cwd, env: PERSON });
  await git(here, 'init', '-q', '-b', 'main');
  await git(here, 'add', 'README');
  await git(here, 'commit', '-q', '-m', 'init');
  await git(there, 'init', '-q', '-b', 'main');
  await git(there, 'fetch', '-q', here, 'main');
  await git(there, 'reset', '-q', '--hard', 'FETCH_HEAD');
}

/** The committer on r1 as `id`, in its own worktree or in place, finished there. */
async function finishedOnR1(id: string, worktree: boolean) {
  const pair = await hosts.open({ remoteDefinitions: { committer: 'committer.yaml' } });
  await sameRepository(pair.local.project, pair.remote.project);
  const where = worktree ? ['--worktree'] : [];
  const spawned = await pair.local.spawnAgent([
    '--host',
    'r1',
    '--agent',
    'committer',
    '--id',
    id,
    ...where,
    '--oneshot',
    'fix a',
  ]);
  expect(spawned.exitCode, spawned.stderr).toBe(0);
  await eventually(() => pair.remote.record(id).status === 'completed', 120_000, `${id} to finish on r1`);
  return pair;
}

describe("another host's agent's work, reviewed and merged here", { timeout: 300_000 }, () => {
  it('review lists it under its host; merge brings its branch here and merges it', async () => {
    const { local, remote } = await finishedOnR1('c1', true);

    const review = await local.flotilla(['review']);
    expect(review.stderr).toBe('');
    expect(review.stdout).toMatch(/^c1 on r1 \(completed\)\s+flotilla\/c1 → main\s+1 ahead, 0 behind, 1 file/m);
    const rows = JSON.parse((await local.flotilla(['review', '--json'])).stdout) as { id: string; host?: string }[];
    expect(rows).toEqual([expect.objectContaining({ id: 'c1', host: 'r1', branch: 'flotilla/c1' })]);
    // --here: this host's agents only (none).
    expect((await local.flotilla(['review', '--here'])).stdout).toMatch(/^no agent has work waiting/);

    const merged = await local.flotilla(['merge', 'c1']);
    expect(merged.stderr).toBe('');
    expect(merged.exitCode).toBe(0);
    expect(merged.stdout).toMatch(/^merged flotilla\/c1 into main \(fast-forward\)/);
    expect(readFileSync(join(local.project, 'a.txt'), 'utf8')).toBe('fixed\n');
    const log = await execa('git', ['log', '-1', '--format=%s', 'main'], { cwd: local.project });
    expect(log.stdout).toBe('fix a');

    // r1's gc knows the work was merged here: its worktree and branch go, as a merged one's do.
    const worktree = remote.record('c1').worktree;
    const gc = await remote.flotilla(['gc', '--json']);
    expect(gc.exitCode, gc.stderr).toBe(0);
    const swept = JSON.parse(gc.stdout) as { worktrees: string[]; branches: string[]; unmerged: unknown[] };
    expect(swept).toMatchObject({ worktrees: [worktree], branches: ['flotilla/c1'], unmerged: [] });
    const left = await execa('git', ['for-each-ref', '--format=%(refname)', 'refs/heads/flotilla', 'refs/flotilla'], {
      cwd: remote.project,
    });
    expect(left.stdout).toBe('');
  });

  it('an agent of another host that worked in place: merge says it has no branch to bring, and changes nothing', async () => {
    const { local } = await finishedOnR1('p1', false);
    const before = (await execa('git', ['rev-parse', 'HEAD'], { cwd: local.project })).stdout;
    const merged = await local.flotilla(['merge', 'p1']);
    expect(merged.exitCode).toBe(1);
    expect(merged.stderr).toMatch(/p1 worked in place on host 'r1' .*: it has no branch to bring here/);
    expect((await execa('git', ['rev-parse', 'HEAD'], { cwd: local.project })).stdout).toBe(before);
  });
});
