import { execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { isCheckoutTop } from '../../src/layout/git-top.js';
import { findProject } from '../../src/layout/layout.js';
import { tempDir } from '../helpers/fleet.js';

let tmp: ReturnType<typeof tempDir>;
beforeEach(() => {
  tmp = tempDir('flotilla-git-top-');
});
afterEach(() => tmp.cleanup());

describe('isCheckoutTop: a real checkout, not any .git entry', () => {
  it('is true for a repository and for a worktree-style .git file', () => {
    const repo = join(tmp.dir, 'repo');
    execFileSync('git', ['init', '-q', repo]);
    expect(isCheckoutTop(repo)).toBe(true);
    const wt = join(tmp.dir, 'wt');
    mkdirSync(wt);
    writeFileSync(join(wt, '.git'), `gitdir: ${join(repo, '.git', 'worktrees', 'wt')}\n`);
    expect(isCheckoutTop(wt)).toBe(true);
  });

  it('is false for no .git, an empty .git folder (a sandbox mount point) and a .git file naming nothing', () => {
    expect(isCheckoutTop(tmp.dir)).toBe(false);
    const empty = join(tmp.dir, 'empty');
    mkdirSync(join(empty, '.git'), { recursive: true });
    expect(isCheckoutTop(empty)).toBe(false);
    const junk = join(tmp.dir, 'junk');
    mkdirSync(junk);
    writeFileSync(join(junk, '.git'), '');
    expect(isCheckoutTop(junk)).toBe(false);
  });

  it('findProject walks past an empty .git above the folder to the folder itself', () => {
    // The shape Codex's sandbox leaves behind: an empty /tmp/.git above a project in /tmp.
    mkdirSync(join(tmp.dir, '.git'));
    const project = join(tmp.dir, 'project', 'sub');
    mkdirSync(project, { recursive: true });
    expect(findProject(project)).toBe(project);
    execFileSync('git', ['init', '-q', join(tmp.dir, 'project')]);
    expect(findProject(project)).toBe(join(tmp.dir, 'project'));
  });
});
