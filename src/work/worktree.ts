import { execFile } from 'node:child_process';
import { resolve, sep } from 'node:path';
import { FlotillaError } from '../errors.js';
import type { Layout } from '../layout/layout.js';
import { SAFE_GIT } from './git.js';

/**
 * Git worktrees for agents (§12): `git worktree add state/worktrees/<id> -b flotilla/<id>`
 * in the project; teardown removes only a worktree under `state/worktrees/` and keeps the
 * branch, so the agent's commits stay reachable.
 */

function git(cwd: string, args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((done) => {
    execFile('git', [...SAFE_GIT, '-C', cwd, ...args], { encoding: 'utf8' }, (err, stdout, stderr) => {
      const code = err ? (typeof err.code === 'number' ? err.code : 1) : 0;
      done({ code, stdout, stderr: err && typeof err.code === 'string' ? `${err.code}: git not found` : stderr });
    });
  });
}

/**
 * Creates the agent's worktree and branch from the project's HEAD; returns its path and that base (the record keeps it
 * for `diff` and `merge`).
 */
export async function addWorktree(
  layout: Layout,
  id: string,
): Promise<{ path: string; base: { branch: string | null; commit: string } | null }> {
  const path = layout.worktree(id);
  const head = await git(layout.project, ['rev-parse', '--verify', '-q', 'HEAD']);
  const branch = await git(layout.project, ['symbolic-ref', '--short', '-q', 'HEAD']);
  const commit = head.stdout.trim();
  const r = await git(layout.project, ['worktree', 'add', path, '-b', `flotilla/${id}`, ...(commit ? [commit] : [])]);
  if (r.code !== 0) {
    const why = r.stderr.trim().split('\n').at(-1) || 'failed';
    // Never taken over: it may hold commits another agent made to pass off as this one's (docs/security.md).
    if (/already exists/.test(why) && /branch/.test(why)) {
      throw new FlotillaError(
        `spawn refused: a branch flotilla/${id} already exists, made before this agent (an earlier agent's, or one an agent's shell created) — pick another --id, or look at it (git log flotilla/${id}) and delete it (git branch -D flotilla/${id})`,
        { code: 'worktree' },
      );
    }
    throw new FlotillaError(
      `spawn refused: git worktree add for '${id}' failed: ${why} — spawn without --worktree, or make ${layout.project} a git repository with a commit`,
      { code: 'worktree' },
    );
  }
  return { path, base: commit ? { branch: branch.code === 0 ? branch.stdout.trim() || null : null, commit } : null };
}

/** True when `path` is a worktree folder Flotilla made (directly under state/worktrees/). */
export function isFleetWorktree(layout: Layout, path: string): boolean {
  const full = resolve(path);
  return full.startsWith(layout.worktreesDir + sep) && !full.slice(layout.worktreesDir.length + 1).includes(sep);
}

/** Removes a worktree made for an agent (the branch is kept). Refuses any path outside state/worktrees/. */
export async function removeWorktree(layout: Layout, path: string): Promise<void> {
  if (!isFleetWorktree(layout, path)) {
    throw new FlotillaError(`refusing to remove '${path}': only worktrees under ${layout.worktreesDir} are removed`, {
      code: 'worktree',
    });
  }
  const r = await git(layout.project, ['worktree', 'remove', '--force', path]);
  if (r.code !== 0) {
    throw new FlotillaError(
      `git worktree remove ${path} failed: ${r.stderr.trim().split('\n')[0] ?? 'failed'} — remove it by hand with 'git worktree remove --force ${path}'`,
      { code: 'worktree' },
    );
  }
}
