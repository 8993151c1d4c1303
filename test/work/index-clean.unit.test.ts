import { gitAt } from '../helpers/git.js';
import { execFileSync } from 'node:child_process';
import {
  chmodSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  symlinkSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { sleep } from '../../src/sleep.js';
import { uncommittedCounts } from '../../src/work/status-cache.js';

// review answers "nothing uncommitted" for a worktree from its index and files, without `git
// status`, where git's own check would find nothing; anything else goes to git. Each state below
// is counted with no cache (as after agents finish) and must give git's answer; a `git` on PATH
// that logs its commands shows whether `git status` ran.
const dir = mkdtempSync(join(tmpdir(), 'flotilla-index-clean-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const git = gitAt;
const STATUS = ['status', '--porcelain', '--untracked-files=all'];
// Short, so the test need not wait the default; any window longer than a timestamp tick is sound.
const SETTLE = 150;
const project = join(dir, 'project');
const wt = join(dir, 'wt');
const index = join(project, '.git', 'worktrees', 'wt', 'index');
const log = join(dir, 'git.log');
const shim = join(dir, 'bin');
const realGit = execFileSync('sh', ['-c', 'command -v git'], { encoding: 'utf8' }).trim();

/** The count with no cache, and whether `git status` ran for it. */
async function cold(): Promise<{ count: number; asked: boolean; hashed: boolean }> {
  await sleep(SETTLE + 100);
  const cacheDir = join(dir, 'cache');
  rmSync(cacheDir, { recursive: true, force: true });
  writeFileSync(log, '');
  const path = process.env.PATH;
  process.env.PATH = `${shim}:${path}`;
  try {
    const [count] = await uncommittedCounts([wt], STATUS, 1, cacheDir, SETTLE);
    const ran = readFileSync(log, 'utf8');
    return { count: count!, asked: ran.includes(' status '), hashed: ran.includes(' hash-object ') };
  } finally {
    process.env.PATH = path;
  }
}

const gitCount = () =>
  git(wt, ...STATUS)
    .split('\n')
    .filter(Boolean).length;

/** Rewrites the worktree's index a second after its files were written (as a commit minutes after the work). */
async function settledIndex(): Promise<void> {
  await sleep(1100);
  git(wt, 'status', '--porcelain');
}

/** Sets the index's mtime to its files' second: every entry is racy, and git hashes each file. */
function racyIndex(): void {
  const t = lstatSync(join(wt, 'b.txt')).mtime;
  utimesSync(index, t, t);
}

describe('a worktree answered without git status', () => {
  it('says nothing uncommitted only where git would, and leaves every change to git', async () => {
    mkdirSync(shim);
    writeFileSync(join(shim, 'git'), `#!/bin/sh\necho " $* " >> '${log}'\nexec '${realGit}' "$@"\n`);
    chmodSync(join(shim, 'git'), 0o755);
    mkdirSync(join(project, 'src', 'deep'), { recursive: true });
    writeFileSync(join(project, 'src', 'a.txt'), 'aaaa\n');
    writeFileSync(join(project, 'src', 'deep', 'z.txt'), 'zzzz\n');
    writeFileSync(join(project, 'src-b.txt'), 'sort me between src and src/\n');
    writeFileSync(join(project, 'b.txt'), 'bbbb\n');
    writeFileSync(join(project, 'é.txt'), 'accent\n');
    writeFileSync(join(project, 'run.sh'), '#!/bin/sh\n');
    chmodSync(join(project, 'run.sh'), 0o755);
    symlinkSync('b.txt', join(project, 'link'));
    writeFileSync(join(project, '.gitignore'), '*.log\n');
    git(project, 'init', '-q', '-b', 'main');
    git(project, 'add', '-A');
    git(project, 'commit', '-q', '-m', 'init');
    git(project, 'worktree', 'add', '-q', '-b', 'flotilla/x', wt, 'main');

    // Clean, its index written after its files: no git status.
    await settledIndex();
    expect(await cold()).toEqual({ count: 0, asked: false, hashed: false });
    // Clean with its entries racy: those files hashed as they are, still no git status.
    racyIndex();
    expect(await cold()).toEqual({ count: 0, asked: false, hashed: true });
    // An index of version 4 (paths compressed) reads the same.
    git(wt, 'update-index', '--index-version', '4');
    await settledIndex();
    expect(await cold()).toEqual({ count: 0, asked: false, hashed: false });
    git(wt, 'update-index', '--index-version', '2');

    const undo = () => {
      git(wt, 'reset', '-q', '--hard', 'main');
      git(wt, 'clean', '-qfdx');
    };
    const changes: [string, () => void][] = [
      ['a tracked file edited, same size', () => writeFileSync(join(wt, 'src', 'a.txt'), 'AAAA\n')],
      ['a new file', () => writeFileSync(join(wt, 'src', 'deep', 'new.txt'), 'n')],
      ['an ignored file', () => writeFileSync(join(wt, 'x.log'), 'ignored')],
      ['an edit staged', () => (writeFileSync(join(wt, 'b.txt'), 'BBBB\n'), git(wt, 'add', 'b.txt'))],
      ['a file deleted', () => rmSync(join(wt, 'src', 'deep', 'z.txt'))],
      ['a mode change', () => chmodSync(join(wt, 'b.txt'), 0o755)],
      ['a link retargeted', () => (rmSync(join(wt, 'link')), symlinkSync('run.sh', join(wt, 'link')))],
      ['a file added with intent', () => (writeFileSync(join(wt, 'n.txt'), 'n'), git(wt, 'add', '-N', 'n.txt'))],
      ['a file skipped in the worktree', () => git(wt, 'update-index', '--skip-worktree', 'b.txt')],
      ['an empty folder', () => mkdirSync(join(wt, 'empty'))],
    ];
    for (const [what, change] of changes) {
      undo();
      await settledIndex();
      change();
      const got = await cold();
      expect([what, got.count]).toEqual([what, gitCount()]);
      // An empty folder is nothing git lists, and nothing the index lacks.
      expect([what, got.asked]).toEqual([what, what !== 'an empty folder']);
      if (what === 'a file skipped in the worktree') git(wt, 'update-index', '--no-skip-worktree', 'b.txt');
    }

    // An edit in the index's own second, its size kept: git answers.
    undo();
    await settledIndex();
    writeFileSync(join(wt, 'b.txt'), 'bBbB\n');
    racyIndex();
    expect(await cold()).toMatchObject({ count: 1, asked: true });
    expect(gitCount()).toBe(1);

    // Racy entries where attributes could convert what git hashes: git answers.
    undo();
    writeFileSync(join(wt, '.gitattributes'), '*.txt text\n');
    git(wt, 'add', '.gitattributes');
    git(wt, 'commit', '-q', '-m', 'attributes');
    racyIndex();
    expect(await cold()).toEqual({ count: 0, asked: true, hashed: false });
    // Not racy: attributes play no part in git's stat check, and no git status runs.
    await settledIndex();
    expect(await cold()).toEqual({ count: 0, asked: false, hashed: false });
  });
});
