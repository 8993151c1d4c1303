import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { git, gitEach } from '../../src/work/git.js';

// gitEach runs one git command in many checkouts through a few shells (review's `git status`
// per worktree): each answer is the one git gives there alone, in order, whatever the path.
const dir = mkdtempSync(join(tmpdir(), 'flotilla-git-each-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('gitEach', () => {
  it('answers as git does in each checkout, in order, for paths with spaces and quotes and one that is not a checkout', async () => {
    const names = ['plain', 'with space', "it's", '$(touch pwned)', 'dirty'];
    const cwds = names.map((n) => join(dir, n));
    for (const c of cwds) {
      mkdirSync(c);
      execFileSync('git', ['init', '-q', c]);
    }
    writeFileSync(join(dir, 'dirty', 'a.txt'), 'a\n');
    writeFileSync(join(dir, 'with space', 'b c.txt'), 'b\n');
    const none = join(dir, 'not-a-checkout');
    mkdirSync(none);
    const all = [...cwds, none];
    for (const shells of [1, 2, 4]) {
      const got = await gitEach(all, ['status', '--porcelain', '--untracked-files=all'], shells);
      const want = await Promise.all(all.map((c) => git(c, ['status', '--porcelain', '--untracked-files=all'])));
      expect(got.map((r) => [r.code === 0, r.stdout])).toEqual(want.map((r) => [r.code === 0, r.stdout]));
    }
    expect((await gitEach([join(dir, 'dirty')], ['status', '--porcelain']))[0]!.stdout).toBe('?? a.txt\n');
    for (const where of [dir, process.cwd()]) expect(existsSync(join(where, 'pwned'))).toBe(false);
  });
});
