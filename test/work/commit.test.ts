import { execa } from 'execa';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { eventually } from '../helpers/tmux.js';
import { completionsFrom, fixture, spawnFleet, type SpawnFleet } from '../spawn/helpers.js';

// End-to-end: a worktree agent of our harness commits under the default sandbox (bubblewrap
// here), and `flotilla diff` shows what it did.
let f: SpawnFleet | undefined;
afterEach(async () => {
  await f?.close();
  f = undefined;
});

async function repo(fl: SpawnFleet) {
  const git = (...a: string[]) =>
    execa('git', ['-c', 'user.email=p@example.com', '-c', 'user.name=person', ...a], { cwd: fl.project });
  await git('init', '-q', '-b', 'main');
  await git('add', 'README');
  await git('commit', '-q', '-m', 'init');
  return git;
}

describe('an agent in its worktree', () => {
  it('commits inside the default sandbox, on its own branch, authored by its id; diff shows its commits, not the base branch moving since', async () => {
    f = spawnFleet();
    const git = await repo(f);
    const r = await f.spawnAgent([
      '--worktree',
      '--wait',
      '--id',
      'fixer',
      '--model',
      `script:${fixture('committer.yaml')}`,
      'fix a.txt',
    ]);
    expect(r.stdout).toContain('Answer: fixer <fixer@flotilla> fix a');
    expect(r.exitCode).toBe(0);
    expect((await git('log', '-1', '--format=%an <%ae> %s', 'flotilla/fixer')).stdout).toBe(
      'fixer <fixer@flotilla> fix a',
    );
    expect((await git('log', '-1', '--format=%s', 'main')).stdout).toBe('init');
    expect((await execa('git', ['status', '--porcelain'], { cwd: f.layout.worktree('fixer') })).stdout).toBe('');
    const init = (await git('rev-parse', 'main')).stdout;
    expect(f.record('fixer').base).toEqual({ branch: 'main', commit: init });

    // The person moves on meanwhile: the diff is still only the agent's work.
    writeFileSync(join(f.project, 'README'), 'changed by the person\n');
    await git('commit', '-q', '-am', 'person');
    const d = await f.flotilla(['diff', 'fixer']);
    expect(d.exitCode).toBe(0);
    expect(d.stdout).toContain('+++ b/a.txt');
    expect(d.stdout).toContain('+fixed');
    expect(d.stdout).not.toContain('README');
    expect((await f.flotilla(['diff', 'fix', '--stat'])).stdout).toMatch(/a\.txt \| 1 \+/);
    const j = JSON.parse((await f.flotilla(['diff', 'fixer', '--json', '--stat'])).stdout);
    expect(j).toMatchObject({
      id: 'fixer',
      kind: 'branch',
      branch: 'flotilla/fixer',
      from: init,
      files: [{ path: 'a.txt', added: 1, deleted: 0 }],
      uncommitted: 0,
    });

    // Uncommitted work in the worktree is counted and named, not mixed into the branch's diff.
    writeFileSync(join(f.layout.worktree('fixer'), 'later.txt'), 'x\n');
    const later = await f.flotilla(['diff', 'fixer']);
    expect(later.stdout).not.toContain('later.txt');
    expect(later.stderr).toContain(
      'fixer also has 1 uncommitted file in its worktree, not shown — flotilla merge fixer --commit commits them',
    );
  });

  it("diff of an in-place agent is its checkout's uncommitted changes; of an unknown id, one line saying how to list agents", async () => {
    f = spawnFleet();
    await repo(f);
    const r = await f.spawnAgent(['--wait', '--id', 'editor', '--model', `script:${fixture('editor.yaml')}`, 'edit']);
    expect(r.exitCode).toBe(0);
    const d = await f.flotilla(['diff', 'editor']);
    expect(d.stdout).toContain('+more');
    expect(d.stderr).toContain('untracked, not shown: n.txt');
    const j = JSON.parse((await f.flotilla(['diff', 'editor', '--json'])).stdout);
    expect(j).toMatchObject({
      kind: 'in-place',
      branch: null,
      files: [{ path: 'README', added: 1, deleted: 0 }],
      untracked: ['n.txt'],
    });
    const bad = await f.flotilla(['diff', 'nobody']);
    expect(bad.exitCode).toBe(1);
    expect(bad.stderr.trim().split('\n')).toHaveLength(1);
  });

  it("a flotilla/ branch one agent made for another id is never taken over: that agent's spawn is refused, naming it", async () => {
    f = spawnFleet();
    const git = await repo(f);
    const r = await f.spawnAgent([
      '--worktree',
      '--wait',
      '--id',
      'planter',
      '--model',
      `script:${fixture('plant-branch.yaml')}`,
      'plant',
    ]);
    expect(r.stdout).toContain('Answer: planted');
    const planted = (await git('rev-parse', 'flotilla/next')).stdout;
    const next = await f.spawnAgent([
      '--worktree',
      '--wait',
      '--id',
      'next',
      '--model',
      `script:${fixture('committer.yaml')}`,
      'fix a.txt',
    ]);
    expect(next.exitCode).toBe(1);
    expect(next.stderr).toContain('spawn refused: a branch flotilla/next already exists, made before this agent');
    expect(next.stderr).toContain('git branch -D flotilla/next');
    expect((await git('rev-parse', 'flotilla/next')).stdout).toBe(planted);
  });
});

describe('an agent in place', () => {
  // The person's identity for the merge commit (a fresh HOME has none).
  const PERSON = {
    GIT_AUTHOR_NAME: 'person',
    GIT_AUTHOR_EMAIL: 'p@example.com',
    GIT_COMMITTER_NAME: 'person',
    GIT_COMMITTER_EMAIL: 'p@example.com',
  };

  it('commits inside the default sandbox on flotilla/<id>, leaving the person’s branch alone; review shows it and merge takes it as the checkout holds it', async () => {
    f = spawnFleet();
    const git = await repo(f);
    const init = (await git('rev-parse', 'main')).stdout;
    const r = await f.spawnAgent(['--wait', '--id', 'here', '--model', `script:${fixture('committer.yaml')}`, 'fix a']);
    expect(r.stdout).toContain('Answer: here <here@flotilla> fix a');
    expect(r.exitCode).toBe(0);
    expect(f.record('here')).toMatchObject({ worktree: null, base: { branch: 'main', commit: init } });
    expect((await git('log', '-1', '--format=%an <%ae> %s', 'flotilla/here')).stdout).toBe(
      'here <here@flotilla> fix a',
    );
    // The person's branch and index are as they were; the agent's file is in their checkout, new to them.
    expect((await git('log', '-1', '--format=%s', 'main')).stdout).toBe('init');
    expect((await git('symbolic-ref', '--short', 'HEAD')).stdout).toBe('main');
    // (The fleet root's own files, not the agent's, left aside.)
    const status = async () => (await git('status', '--porcelain', '--', '.', ':(exclude).flotilla')).stdout;
    expect(await status()).toBe('?? a.txt');

    const review = JSON.parse((await f.flotilla(['review', '--json'])).stdout);
    expect(review).toMatchObject([{ id: 'here', branch: 'flotilla/here', base: 'main', ahead: 1, files: ['a.txt'] }]);
    const d = await f.flotilla(['diff', 'here', '--json']);
    expect(JSON.parse(d.stdout)).toMatchObject({ kind: 'branch', branch: 'flotilla/here', from: init });
    // status shows its standing as for a worktree agent.
    const rows = JSON.parse((await f.flotilla(['status', '--json'])).stdout) as { id: string; work?: unknown }[];
    expect(rows.find((r) => r.id === 'here')?.work).toEqual({
      branch: 'flotilla/here',
      base: 'main',
      ahead: 1,
      behind: 0,
    });
    // Ended and not merged: gc keeps its branch and its git dir, and says so.
    const fl = f;
    await eventually(async () => (await fl.flotilla(['cancel', 'here'])).exitCode === 0, 10_000, 'cancel here');
    expect((await f.flotilla(['gc'])).stdout).toContain(
      'kept flotilla/here and its git dir (it worked in place): 1 commit not merged — flotilla merge here, or gc --force to drop it',
    );

    // The person commits meanwhile; the merge is a merge commit and the checkout's files stay as they are.
    writeFileSync(join(f.project, 'README'), 'changed by the person\n');
    await git('commit', '-q', '-am', 'person');
    const m = await f.flotilla(['merge', 'here'], PERSON);
    expect(m.stderr).toBe('');
    expect(m.stdout).toContain('merged flotilla/here into main (merge)');
    expect((await git('log', '--format=%an %s', 'main')).stdout.split('\n')).toEqual([
      'person Merge flotilla/here (agent here) into main',
      'person person',
      'here fix a',
      'person init',
    ]);
    expect(await status()).toBe('');

    // It committed nothing: merge says so rather than "up to date".
    const none = await f.spawnAgent(['--wait', '--id', 'idle', '--model', `script:${fixture('editor.yaml')}`, 'edit']);
    expect(none.exitCode).toBe(0);
    expect((await f.flotilla(['merge', 'idle'], PERSON)).stderr.trim()).toBe(
      `flotilla: idle worked in place in ${f.project} and committed nothing on flotilla/idle: its changes are uncommitted in that checkout (flotilla diff idle); commit them there yourself`,
    );

    // Merged and ended: gc takes its branch and its own git dir.
    expect(existsSync(f.layout.inPlaceGitDir('here'))).toBe(true);
    expect((await f.flotilla(['gc'])).stdout).toContain('0 worktrees, 1 branches');
    expect((await git('branch', '--list', 'flotilla/*')).stdout.trim()).toBe('flotilla/idle');
    expect(existsSync(f.layout.inPlaceGitDir('here'))).toBe(false);
  });

  it('in a folder whose path holds a colon: status and review count its commit, and merge takes it', async () => {
    // git's list of alternate object folders is split at ':', so the path is what is tested.
    f = spawnFleet({ prefix: 'flotilla-a:b-' });
    const git = await repo(f);
    const r = await f.spawnAgent([
      '--wait',
      '--id',
      'colon',
      '--model',
      `script:${fixture('committer.yaml')}`,
      'fix a',
    ]);
    expect(r.stdout).toContain('Answer: colon <colon@flotilla> fix a');
    const rows = JSON.parse((await f.flotilla(['status', '--json'])).stdout) as { id: string; work?: unknown }[];
    expect(rows.find((row) => row.id === 'colon')?.work).toEqual({
      branch: 'flotilla/colon',
      base: 'main',
      ahead: 1,
      behind: 0,
    });
    const review = JSON.parse((await f.flotilla(['review', '--json'])).stdout);
    expect(review).toMatchObject([{ id: 'colon', ahead: 1, files: ['a.txt'] }]);
    expect((await f.flotilla(['merge', 'colon'], PERSON)).stdout).toContain('merged flotilla/colon into main');
    expect((await git('log', '-1', '--format=%an %s', 'main')).stdout).toBe('colon fix a');
  });

  it('a tip it makes unimportable at its task’s end: one completion still goes, and the audit says why', async () => {
    f = spawnFleet();
    const git = await repo(f);
    const init = (await git('rev-parse', 'main')).stdout;
    const r = await f.spawnAgent(['--wait', '--id', 'bad', '--model', `script:${fixture('hostile-tip.yaml')}`, 'x']);
    expect(r.stdout).toContain('Answer: POINTED');
    expect(r.exitCode).toBe(0);
    const fl = f;
    await eventually(async () => completionsFrom(fl, 'human', 'bad').length === 1, 10_000, 'completion of bad');
    const lines = readFileSync(f.layout.auditFile, 'utf8').split('\n').filter(Boolean);
    const failed = lines
      .map((l) => JSON.parse(l) as Record<string, unknown>)
      .filter((a) => a.event === 'import_failed');
    expect(failed).toMatchObject([
      { agent: 'bad', task: 1, reason: expect.stringMatching(/^flotilla\/bad: its commit 1234abcd1234 is not whole/) },
    ]);
    // The person finds it with `flotilla audit`, and the repository's branch is as it was.
    expect((await f.flotilla(['audit', '--event', 'import_failed'])).stdout).toContain('bad');
    expect((await git('rev-parse', 'flotilla/bad')).stdout).toBe(init);
    expect(completionsFrom(f, 'human', 'bad')).toHaveLength(1);
  });
});
