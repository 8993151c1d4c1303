import { execa } from 'execa';
import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it, onTestFinished } from 'vitest';
import { eventually } from '../helpers/tmux.js';
import { fixture, spawnFleet, type SpawnFleet } from '../spawn/helpers.js';

// End-to-end, default sandbox: worktree agents commit; the person reviews and merges their
// branches; a conflicting one is reported with its file and who leases it, and not merged.
let f: SpawnFleet | undefined;
afterEach(async () => {
  await f?.close();
  f = undefined;
});

// The person's identity for merge commits (a fresh HOME has none).
const PERSON = {
  GIT_AUTHOR_NAME: 'person',
  GIT_AUTHOR_EMAIL: 'p@example.com',
  GIT_COMMITTER_NAME: 'person',
  GIT_COMMITTER_EMAIL: 'p@example.com',
};

async function setUp(): Promise<{ fl: SpawnFleet; git: (...a: string[]) => Promise<{ stdout: string }> }> {
  const fl = spawnFleet();
  const git = (...a: string[]) => execa('git', a, { cwd: fl.project, env: PERSON });
  await git('init', '-q', '-b', 'main');
  await git('add', 'README');
  await git('commit', '-q', '-m', 'init');
  return { fl, git };
}

async function worker(fl: SpawnFleet, id: string, script: string): Promise<void> {
  const r = await fl.spawnAgent(['--worktree', '--wait', '--id', id, '--model', `script:${fixture(script)}`, 'work']);
  expect(r.exitCode, r.stderr).toBe(0);
}

describe('review and merge', () => {
  it('review lists each agent’s work; merge fast-forwards, then makes a merge commit, and refuses a conflict naming the file and its lease holder', async () => {
    const { fl, git } = await setUp();
    f = fl;
    await worker(fl, 'wa', 'committer.yaml');
    await worker(fl, 'wb', 'committer-other.yaml');
    await worker(fl, 'wc', 'committer-c.yaml');

    const before = JSON.parse((await fl.flotilla(['review', '--json'])).stdout) as { id: string }[];
    expect(before.map((r) => r.id).sort()).toEqual(['wa', 'wb', 'wc']);
    expect(before.find((r) => r.id === 'wa')).toMatchObject({
      branch: 'flotilla/wa',
      base: 'main',
      ahead: 1,
      behind: 0,
      files: ['a.txt'],
      conflicts: [],
      uncommitted: 0,
    });

    const ff = await fl.flotilla(['merge', 'wa'], PERSON);
    expect(ff.stdout).toContain('merged flotilla/wa into main (fast-forward)');
    expect(ff.exitCode).toBe(0);
    expect((await git('log', '-1', '--format=%an %s', 'main')).stdout).toBe('wa fix a');

    // Now wb conflicts on a.txt with main, and wc is one behind.
    expect((await fl.flotilla(['lease', 'take', 'a.txt', '--why', 'editing it myself'])).exitCode).toBe(0);
    const text = (await fl.flotilla(['review'])).stdout;
    expect(text).toMatch(/^wb \(\w+\) {2}flotilla\/wb → main {2}1 ahead, 1 behind, 1 file {2}— CONFLICTS: a\.txt$/m);
    expect(text).toMatch(/^wc .*1 ahead, 1 behind, 1 file {2}— merges cleanly$/m);
    expect(text).not.toMatch(/^wa /m);

    const mainBefore = (await git('rev-parse', 'main')).stdout;
    const conflict = await fl.flotilla(['merge', 'wb'], PERSON);
    expect(conflict.exitCode).toBe(1);
    expect(conflict.stderr).toContain('not merged: flotilla/wb conflicts with main in 1 file — nothing was changed');
    expect(conflict.stderr).toMatch(/^ {2}a\.txt {2}\(leased by human\)$/m);
    expect((await git('rev-parse', 'main')).stdout).toBe(mainBefore);
    expect((await git('status', '--porcelain', '--untracked-files=no')).stdout).toBe('');
    const cj = JSON.parse((await fl.flotilla(['merge', 'wb', '--json'], PERSON)).stdout);
    expect(cj).toMatchObject({ merged: false, conflicts: [{ path: 'a.txt', holders: ['human'] }] });

    const m = await fl.flotilla(['merge', 'wc', '--json'], PERSON);
    expect(m.exitCode).toBe(0);
    expect(JSON.parse(m.stdout)).toMatchObject({ merged: true, how: 'merge', into: 'main' });
    expect((await git('log', '--format=%an %s', 'main')).stdout.split('\n')).toEqual([
      'person Merge flotilla/wc (agent wc) into main',
      'wc add c',
      'wa fix a',
      'person init',
    ]);
    expect((await git('show', 'main:c.txt')).stdout).toBe('c');
    expect((await execa('cat', ['c.txt'], { cwd: fl.project })).stdout).toBe('c');
    expect(JSON.parse((await fl.flotilla(['review', '--json'])).stdout).map((r: { id: string }) => r.id)).toEqual([
      'wb',
    ]);

    // gc removes the merged worktrees and their branches once the agents have ended; the unmerged one stays until
    // --force.
    for (const id of ['wa', 'wb', 'wc'])
      await eventually(async () => (await fl.flotilla(['cancel', id])).exitCode === 0, 10_000, `cancel ${id}`);
    const gc = await fl.flotilla(['gc']);
    expect(gc.stdout).toContain('2 worktrees, 2 branches');
    expect(gc.stdout).toContain(
      'kept flotilla/wb and its worktree: 1 commit not merged — flotilla merge wb, or gc --force to drop it',
    );
    expect((await git('branch', '--list', 'flotilla/*', '--format=%(refname:short)')).stdout).toBe('flotilla/wb');
    expect(existsSync(fl.layout.worktree('wb'))).toBe(true);
    expect(fl.records().map((r) => r.id)).toEqual(['wb']);
    const forced = JSON.parse((await fl.flotilla(['gc', '--force', '--json'])).stdout);
    expect(forced).toMatchObject({ worktrees: [fl.layout.worktree('wb')], branches: ['flotilla/wb'], unmerged: [] });
    expect((await git('branch', '--list', 'flotilla/*')).stdout).toBe('');
  });

  it('bad input: still working, uncommitted work, an agent in place that committed nothing — each says what to do and merges nothing', async () => {
    const { fl, git } = await setUp();
    f = fl;
    await worker(fl, 'wc', 'committer-c.yaml');
    writeFileSync(join(fl.layout.worktree('wc'), 'left.txt'), 'left\n');
    const unc = await fl.flotilla(['merge', 'wc'], PERSON);
    expect(unc.exitCode).toBe(1);
    expect(unc.stderr).toContain(
      `wc left 1 uncommitted file in ${fl.layout.worktree('wc')} — merge them too with flotilla merge wc --commit`,
    );
    expect((await git('log', '-1', '--format=%s', 'main')).stdout).toBe('init');
    const ok = await fl.flotilla(['merge', 'wc', '--commit'], PERSON);
    expect(ok.stdout).toContain('committed what wc left uncommitted; merged flotilla/wc into main (fast-forward)');
    expect((await git('log', '--format=%an %s', 'main')).stdout.split('\n')).toEqual([
      'wc Work wc left uncommitted, committed at merge',
      'wc add c',
      'person init',
    ]);

    const inPlace = await fl.spawnAgent([
      '--wait',
      '--id',
      'here',
      '--model',
      `script:${fixture('editor.yaml')}`,
      'edit',
    ]);
    expect(inPlace.exitCode).toBe(0);
    const none = await fl.flotilla(['merge', 'here'], PERSON);
    expect(none.exitCode).toBe(1);
    expect(none.stderr.trim()).toBe(
      `flotilla: here worked in place in ${fl.project} and committed nothing on flotilla/here: its changes are uncommitted in that checkout (flotilla diff here); commit them there yourself`,
    );

    const busy = await fl.spawnAgent([
      '--worktree',
      '--id',
      'busy',
      '--model',
      `script:${fixture('sleeper.yaml')}`,
      'sleep',
    ]);
    expect(busy.exitCode).toBe(0);
    await eventually(() => fl.record('busy').status === 'working', 30_000, 'busy to work');
    const refused = await fl.flotilla(['merge', 'busy'], PERSON);
    expect(refused.exitCode).toBe(1);
    expect(refused.stderr).toContain(
      'busy is still working (working) — retry when it is idle or has finished: flotilla wait busy, then flotilla merge busy',
    );
  });

  it('the first review after an agent ends asks git nothing of its worktree: the count was kept at its end', async () => {
    const { fl } = await setUp();
    f = fl;
    await worker(fl, 'wl', 'leaves-uncommitted.yaml');
    // A git in front of the person's, logging each call: the only way to see which git calls review makes.
    const bin = mkdtempSync(join(tmpdir(), 'flotilla-logging-git-'));
    onTestFinished(() => rmSync(bin, { recursive: true, force: true }));
    const calls = join(bin, 'calls');
    const real = (await execa('sh', ['-c', 'command -v git'])).stdout;
    writeFileSync(join(bin, 'git'), `#!/bin/sh\necho "$*" >> '${calls}'\nexec '${real}' "$@"\n`);
    chmodSync(join(bin, 'git'), 0o755);
    const review = async () => {
      writeFileSync(calls, '');
      const r = await fl.flotilla(['review', '--json'], { PATH: `${bin}:${process.env.PATH}` });
      expect(r.exitCode, r.stderr).toBe(0);
      const row = (JSON.parse(r.stdout) as { id: string; uncommitted: number }[]).find((x) => x.id === 'wl');
      const statuses = readFileSync(calls, 'utf8')
        .split('\n')
        .filter((l) => l.includes(fl.layout.worktree('wl')) && / status /.test(l));
      return { uncommitted: row?.uncommitted, statuses };
    };
    expect(await review()).toEqual({ uncommitted: 1, statuses: [] });
    // The worktree changed after the agent's end: git is asked, and its answer shown.
    writeFileSync(join(fl.layout.worktree('wl'), 'later.txt'), 'later\n');
    await new Promise((r) => setTimeout(r, 300));
    const after = await review();
    expect(after.uncommitted).toBe(2);
    expect(after.statuses).toHaveLength(1);
  });
});
