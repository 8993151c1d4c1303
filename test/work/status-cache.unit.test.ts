import { gitAt } from '../helpers/git.js';
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { sleep } from '../../src/sleep.js';
import { uncommittedCounts } from '../../src/work/status-cache.js';

// review's uncommitted count per worktree skips `git status` for a worktree unchanged since the
// last count. Each change below is made after the cache holds a wrong count (99) for the old
// state: a stale answer shows as 99, a fresh one as what git itself says.
const dir = mkdtempSync(join(tmpdir(), 'flotilla-status-cache-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const git = gitAt;
const STATUS = ['status', '--porcelain', '--untracked-files=all'];
// Short, so the test need not wait the default; any window longer than a timestamp tick is sound.
const SETTLE = 150;
const settle = () => sleep(SETTLE + 100);
const cacheDir = join(dir, 'cache');
const project = join(dir, 'project');
const wt = join(dir, 'wt');
const counts = () => uncommittedCounts([wt], STATUS, 1, cacheDir, SETTLE).then((c) => c[0]);
const gitCount = () =>
  git(wt, ...STATUS)
    .split('\n')
    .filter(Boolean).length;

/** The worktree's entry (the only one): makes it say 99; false when there is none. */
function poisonEntry(): boolean {
  const files = readdirSync(cacheDir, { withFileTypes: true }).filter((e) => e.name.endsWith('.json'));
  if (files.length === 0) return false;
  const file = join(cacheDir, files[0]!.name);
  writeFileSync(file, JSON.stringify({ ...JSON.parse(readFileSync(file, 'utf8')), count: 99 }));
  return true;
}

/** Counts until the cache holds this worktree, then makes its entry say 99 and sees the cache answer. */
async function poison(): Promise<void> {
  for (let i = 0; i < 6; i++) {
    await counts();
    if (poisonEntry() && (await counts()) === 99) return;
    await settle();
  }
  throw new Error('the worktree never entered the cache');
}

describe('uncommittedCounts', () => {
  it('answers from the cache while nothing changed, and as git does after any change', async () => {
    mkdirSync(project);
    git(project, 'init', '-q', '-b', 'main');
    mkdirSync(join(project, 'src'));
    writeFileSync(join(project, 'src', 'a.txt'), 'aaaa\n');
    writeFileSync(join(project, 'b.txt'), 'bbbb\n');
    git(project, 'add', '-A');
    git(project, 'commit', '-q', '-m', 'init');
    git(project, 'worktree', 'add', '-q', '-b', 'flotilla/x', wt, 'main');
    // Written just now: not cached, git answers.
    writeFileSync(join(wt, 'b.txt'), 'BBBB\n');
    expect(await counts()).toBe(1);
    git(wt, 'checkout', '-q', '--', 'b.txt');
    await settle();

    await poison();

    const changes: [string, () => void][] = [
      ['a tracked file edited, same size', () => writeFileSync(join(wt, 'src', 'a.txt'), 'AAAA\n')],
      ['a new file in a new folder', () => (mkdirSync(join(wt, 'new')), writeFileSync(join(wt, 'new', 'c.txt'), 'c'))],
      ['a second new file in that folder', () => writeFileSync(join(wt, 'new', 'd.txt'), 'd')],
      ['files staged', () => git(wt, 'add', '-A')],
      ['a commit', () => git(wt, 'commit', '-q', '-m', 'work')],
      ['the branch moved back, index and files kept', () => git(wt, 'reset', '-q', '--soft', 'HEAD~1')],
      ['that commit made again', () => git(wt, 'commit', '-q', '-m', 'work again')],
      ['a file removed', () => rmSync(join(wt, 'b.txt'))],
      ['an untracked file', () => writeFileSync(join(wt, 'e.log'), 'e')],
      ['an ignore rule for it', () => writeFileSync(join(project, '.git', 'info', 'exclude'), '*.log\n')],
      ['HEAD moved back', () => git(wt, 'reset', '-q', '--hard', 'main')],
    ];
    for (const [what, change] of changes) {
      await poison();
      change();
      await settle();
      expect([what, await counts()]).toEqual([what, gitCount()]);
    }
    // The last state is clean, and cached again once settled.
    expect(gitCount()).toBe(0);
    await poison();
    // An agent's shell has an identity of its own (GIT_AUTHOR_*): the same answer serves it.
    process.env.GIT_AUTHOR_NAME = 'another';
    try {
      expect(await counts()).toBe(99);
    } finally {
      delete process.env.GIT_AUTHOR_NAME;
    }
    // A rule added to the excludes file the person's config names (here through GIT_CONFIG_GLOBAL).
    const ignore = join(dir, 'global-ignore');
    writeFileSync(ignore, '');
    writeFileSync(join(dir, 'gitconfig'), `[core]\n\texcludesFile = ${ignore}\n`);
    process.env.GIT_CONFIG_GLOBAL = join(dir, 'gitconfig');
    const gitNow = () =>
      execFileSync('git', ['-C', wt, ...STATUS], { encoding: 'utf8' })
        .split('\n')
        .filter(Boolean).length;
    try {
      writeFileSync(join(wt, 'f.tmp'), 'f');
      await settle();
      await poison();
      writeFileSync(ignore, '*.tmp\n');
      await settle();
      expect(gitNow()).toBe(0);
      expect(await counts()).toBe(0);
    } finally {
      delete process.env.GIT_CONFIG_GLOBAL;
    }
  });
});
