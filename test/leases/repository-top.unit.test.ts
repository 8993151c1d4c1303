import { execFileSync } from 'node:child_process';
import { mkdirSync, realpathSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { checkoutPath, repositoryTop } from '../../src/leases/checkout.js';
import { tempDir } from '../helpers/fleet.js';

/** Leases are the repository's (docs/design.md §16): a linked worktree's paths key to its main checkout. */
const cleanups: (() => void)[] = [];
afterEach(() => {
  for (const c of cleanups.splice(0)) c();
});

function repo(): string {
  const t = tempDir('flotilla-repo-top-');
  cleanups.push(t.cleanup);
  const dir = realpathSync(t.dir);
  const env = {
    ...process.env,
    GIT_AUTHOR_NAME: 't',
    GIT_AUTHOR_EMAIL: 't@t',
    GIT_COMMITTER_NAME: 't',
    GIT_COMMITTER_EMAIL: 't@t',
  };
  mkdirSync(join(dir, 'main'));
  execFileSync('git', ['init', '-q'], { cwd: join(dir, 'main'), env });
  execFileSync('git', ['commit', '--allow-empty', '-qm', 'base'], { cwd: join(dir, 'main'), env });
  execFileSync('git', ['worktree', 'add', '-q', join(dir, 'wt'), '-b', 'side'], { cwd: join(dir, 'main'), env });
  return dir;
}

describe('repositoryTop and checkoutPath', () => {
  it('key a file in a linked worktree to the main checkout, relative to the worktree', () => {
    const dir = repo();
    expect(repositoryTop(join(dir, 'wt'))).toBe(join(dir, 'main'));
    expect(checkoutPath(join(dir, 'wt', 'src', 'app.ts'))).toEqual({ checkout: join(dir, 'main'), rel: 'src/app.ts' });
    expect(checkoutPath(join(dir, 'main', 'src', 'app.ts'))).toEqual({
      checkout: join(dir, 'main'),
      rel: 'src/app.ts',
    });
  });

  it('leave a checkout whose .git file has no commondir (a submodule) its own', () => {
    const dir = repo();
    const sub = join(dir, 'main', 'vendor', 'lib');
    mkdirSync(join(dir, 'main', '.git', 'modules', 'lib'), { recursive: true });
    mkdirSync(sub, { recursive: true });
    writeFileSync(join(sub, '.git'), 'gitdir: ../../.git/modules/lib\n');
    expect(checkoutPath(join(sub, 'x.c'))).toEqual({ checkout: sub, rel: 'x.c' });
  });
});
