import { copyFileSync, existsSync, mkdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { FlotillaError } from '../errors.js';
import type { Layout } from '../layout/layout.js';
import { ownBranchFile, REPO_OBJECTS } from '../tools/git-writable.js';
import { git, gitWhy } from './git.js';
import { branchOf } from './work.js';

/**
 * An agent working in place commits through a git dir of its own (§12, docs/decisions.md
 * "Agents commit in place through a git dir of their own"): made here at spawn, with HEAD on
 * a new branch `flotilla/<id>` at the checkout's HEAD (in it, and in the repository), an index
 * of that commit and an objects folder of its own. In its
 * sandbox it is seen as the checkout's `.git` (tools/git-writable.ts `inPlaceGitWrites`);
 * the person's HEAD, index and branch are never the agent's.
 *
 * Only where the agent's cwd is the project or inside it, the project's `.git` is a folder
 * (not a worktree's or submodule's pointer file) and HEAD has a commit; elsewhere null, and
 * the agent works in place as before, without commits. Returns the base, as `addWorktree`.
 */
export async function addInPlaceBranch(
  layout: Layout,
  id: string,
  cwd: string,
): Promise<{ branch: string | null; commit: string } | null> {
  const project = layout.project;
  const within = cwd === project || cwd.startsWith(project.replace(/\/+$/, '') + '/');
  const common = join(project, '.git');
  if (!within || !isDir(common)) return null;
  // One git run for both: HEAD's commit, and the branch HEAD names (`HEAD` when detached).
  const head = await git(project, ['rev-parse', 'HEAD^{commit}', '--symbolic-full-name', 'HEAD']);
  const [commit = '', named = ''] = head.stdout.split('\n').map((l) => l.trim());
  if (head.code !== 0 || !/^[0-9a-f]{40,64}$/.test(commit)) return null;
  const branch = branchOf(id);
  // Never taken over: it may hold commits another agent made to pass off as this one's (docs/security.md).
  const made = await git(project, [
    'update-ref',
    '-m',
    `flotilla: ${id} works in place`,
    `refs/heads/${branch}`,
    commit,
    '',
  ]);
  if (made.code !== 0) {
    const exists = (await git(project, ['rev-parse', '--verify', '-q', `refs/heads/${branch}`])).code === 0;
    throw new FlotillaError(
      exists
        ? `spawn refused: a branch ${branch} already exists, made before this agent (an earlier agent's, or one an agent's shell created) — pick another --id, or look at it (git log ${branch}) and delete it (git branch -D ${branch})`
        : `spawn refused: making branch ${branch} for '${id}' failed: ${gitWhy(made)} — spawn with --worktree, or see git status in ${project}`,
      { code: 'worktree' },
    );
  }
  const own = layout.inPlaceGitDir(id);
  rmSync(own, { recursive: true, force: true });
  // Its branch and objects are its own: the repository's are seen read-only as its alternate
  // (tools/git-writable.ts), and its commits reach flotilla/<id> here through an import (import-branch.ts).
  for (const d of [
    join('refs', 'heads', 'flotilla'),
    join('logs', 'refs'),
    join('objects', 'pack'),
    join('objects', 'info'),
    REPO_OBJECTS,
  ])
    mkdirSync(join(own, d), { recursive: true });
  writeFileSync(join(own, 'objects', 'info', 'alternates'), `../${REPO_OBJECTS}\n`);
  writeFileSync(ownBranchFile(own, id), `${commit}\n`);
  writeFileSync(join(own, 'HEAD'), `ref: refs/heads/${branch}\n`);
  // The person's index copied, then reset to the commit: what the person staged is not the
  // agent's, and the files' stat data is kept, so its first `git status` need not read them all.
  const index = join(own, 'index');
  if (existsSync(join(common, 'index'))) copyFileSync(join(common, 'index'), index);
  const read = await git(project, ['read-tree', '--reset', commit], { ...process.env, GIT_INDEX_FILE: index });
  if (read.code !== 0) {
    rmSync(index, { force: true });
    await git(project, ['read-tree', commit], { ...process.env, GIT_INDEX_FILE: index });
  }
  return { branch: named.startsWith('refs/heads/') ? named.slice('refs/heads/'.length) || null : null, commit };
}

function isDir(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}
