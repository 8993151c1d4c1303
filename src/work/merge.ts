import { copyFileSync, existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AgentRecord } from '../fleet/record.js';
import { isTerminal } from '../fleet/record-status.js';
import type { Layout } from '../layout/layout.js';
import { FlotillaError } from '../errors.js';
import { listLeases } from '../leases/list.js';
import { pathsOverlap } from '../leases/match.js';
import type { MergeWorkResult } from '../tools/merge-work.js';
import { branchState } from './branch-state.js';
import { git, gitWhy } from './git.js';
import { agentWork } from './work.js';

/**
 * `flotilla merge <id>` (docs/design.md §12): the agent's branch into the branch its worktree
 * was made from — a fast-forward when the base has not moved, a merge commit otherwise.
 * A conflict is found before anything is written (`git merge-tree`), so nothing is merged.
 * Where the base branch is checked out, the merge runs there (its files follow); elsewhere
 * only the branch moves. `commit`: first commit what the agent left uncommitted, as its own.
 */
export async function mergeWork(
  layout: Layout,
  rec: AgentRecord,
  opts: { commit?: boolean; env?: NodeJS.ProcessEnv } = {},
): Promise<MergeWorkResult> {
  const id = rec.id;
  const work = await agentWork(layout, rec);
  if (work.kind === 'in-place') {
    throw new FlotillaError(
      `${id} worked in place in ${work.cwd}: it has no branch to merge — its changes are uncommitted in that checkout (flotilla diff ${id}); commit them there yourself`,
      { code: 'no-branch' },
    );
  }
  if (rec.status !== 'idle' && !isTerminal(rec.status)) {
    throw new FlotillaError(
      `${id} is still working (${rec.status}) — retry when it is idle or has finished: flotilla wait ${id}, then flotilla merge ${id}`,
      { code: 'busy' },
    );
  }
  if (work.kind === 'branch' && work.unimported)
    throw new FlotillaError(
      `${id}'s latest commits could not be brought into the repository (${work.unimported}) — nothing merged; look at them with git -C ${layout.inPlaceGitDir(id)} log, or merge ${work.branch} as it stands yourself`,
      { code: 'merge' },
    );
  let committedFirst = false;
  if (work.uncommitted > 0 && work.worktree) {
    if (!opts.commit) {
      throw new FlotillaError(
        `${id} left ${work.uncommitted} uncommitted file${work.uncommitted === 1 ? '' : 's'} in ${work.worktree} — merge them too with flotilla merge ${id} --commit (committed as ${id}), or look first: git -C ${work.worktree} status`,
        { code: 'uncommitted' },
      );
    }
    await commitLeftovers(work.worktree, id, opts.env);
    committedFirst = true;
  }
  if (!work.base.branch) {
    throw new FlotillaError(
      `${id}'s worktree was made from a detached HEAD (${work.base.commit.slice(0, 12)}): there is no branch to merge into — merge ${work.branch} yourself`,
      { code: 'no-base' },
    );
  }
  const into = work.base.branch;
  const s = await branchState(layout, work.branch, work.base);
  if (!s.exists)
    throw new FlotillaError(
      `${id} has no branch ${work.branch} any more — nothing to merge (git branch --list 'flotilla/*')`,
      { code: 'no-branch' },
    );
  if (s.ahead === 0 && work.checkout)
    throw new FlotillaError(
      `${id} worked in place in ${work.checkout} and committed nothing on ${work.branch}: its changes are uncommitted in that checkout (flotilla diff ${id}); commit them there yourself`,
      { code: 'no-branch' },
    );
  if (s.ahead === 0)
    return { id, merged: true, how: 'up-to-date', branch: work.branch, into, commit: s.target, committedFirst };
  if (s.conflicts.length > 0)
    return { id, merged: false, branch: work.branch, into, conflicts: withHolders(layout, id, s.conflicts) };
  const how = s.behind === 0 ? 'fast-forward' : 'merge';
  const message = `Merge ${work.branch} (agent ${id}) into ${into}`;
  const checkout = await checkedOutAt(layout, into);
  // In place, the agent's files are the checkout's already: a `git merge` would refuse them as local changes.
  const taken =
    checkout && work.checkout ? await takeAsItStands(checkout, into, s, work.branch, message, opts.env) : null;
  if (taken) {
    if (!taken.ok)
      throw new FlotillaError(
        `moving ${into} to ${work.branch} failed: ${taken.why} — did ${into} move meanwhile? retry flotilla merge ${id}`,
        { code: 'merge' },
      );
  } else if (checkout) {
    const r = await git(checkout, ['merge', '--no-edit', '-m', message, work.branch], opts.env);
    if (r.code !== 0) {
      await git(checkout, ['merge', '--abort'], opts.env);
      throw new FlotillaError(
        `git merge of ${work.branch} in ${checkout} failed: ${gitWhy(r)} — commit or stash your changes there, then retry flotilla merge ${id}`,
        { code: 'merge' },
      );
    }
  } else {
    const made =
      how === 'fast-forward'
        ? await git(layout.project, ['rev-parse', `refs/heads/${work.branch}`])
        : await git(
            layout.project,
            ['commit-tree', s.tree!, '-p', s.target, '-p', work.branch, '-m', message],
            opts.env,
          );
    const commit = made.code === 0 ? made.stdout.trim() : '';
    const r = commit ? await git(layout.project, ['update-ref', `refs/heads/${into}`, commit, s.target]) : made;
    if (r.code !== 0)
      throw new FlotillaError(
        `moving ${into} to the merge failed: ${gitWhy(r)} — did ${into} move meanwhile? retry flotilla merge ${id}`,
        { code: 'merge' },
      );
  }
  const tip = (await git(layout.project, ['rev-parse', `refs/heads/${into}`])).stdout.trim();
  return { id, merged: true, how, branch: work.branch, into, commit: tip, committedFirst };
}

/** Each conflicting file with the other agents that hold a lease on it. */
function withHolders(layout: Layout, id: string, paths: string[]): { path: string; holders: string[] }[] {
  const leases = listLeases(layout)
    .flatMap((v) => v.leases)
    .filter((l) => l.holder !== id);
  return paths.map((path) => ({
    path,
    holders: [...new Set(leases.filter((l) => pathsOverlap(l.path, path)).map((l) => l.holder))],
  }));
}

/**
 * An in-place agent's merge where the checkout's files already are what the merge brings: the
 * agent wrote them there, then committed them on its branch. Every file the merge changes must
 * read in the checkout as in the merge's result; then the branch moves (only from the tip it
 * had) and those files' index entries follow, and nothing in the working tree is written. Null
 * where some file differs (the person changed it since, or the agent's work is not there):
 * an ordinary `git merge` is then the way, and refuses local changes it would overwrite.
 */
async function takeAsItStands(
  checkout: string,
  into: string,
  s: { target: string; tree: string | null },
  branch: string,
  message: string,
  env?: NodeJS.ProcessEnv,
): Promise<{ ok: true } | { ok: false; why: string } | null> {
  const made = s.tree
    ? await git(checkout, ['commit-tree', s.tree, '-p', s.target, '-p', branch, '-m', message], env)
    : await git(checkout, ['rev-parse', `refs/heads/${branch}`]);
  const commit = made.stdout.trim();
  if (made.code !== 0 || !commit) return null;
  const changed = await git(checkout, ['diff', '--no-renames', '--name-only', '-z', s.target, commit]);
  const paths = changed.stdout.split('\0').filter(Boolean);
  if (changed.code !== 0 || paths.length === 0) return null;
  // The checkout's files against the merge's result, through an index of that result of our own.
  const scratch = mkdtempSync(join(tmpdir(), 'flotilla-merge-'));
  try {
    const index = { ...(env ?? process.env), GIT_INDEX_FILE: join(scratch, 'index') };
    // The person's index as a start keeps the files' stat data: only the files that differ are read.
    const own = (await git(checkout, ['rev-parse', '--path-format=absolute', '--git-path', 'index'])).stdout.trim();
    if (own && existsSync(own)) copyFileSync(own, index.GIT_INDEX_FILE);
    const read = await git(checkout, ['read-tree', '--reset', commit], index);
    if (read.code !== 0) return null;
    await git(checkout, ['update-index', '-q', '--refresh'], index);
    const differ = await git(checkout, ['diff-files', '--name-only', '-z'], index);
    const inMerge = new Set(
      (await git(checkout, ['ls-tree', '-r', '-z', '--name-only', commit])).stdout.split('\0').filter(Boolean),
    );
    const dirty = new Set(differ.stdout.split('\0').filter(Boolean));
    const asItStands = paths.every((p) => (inMerge.has(p) ? !dirty.has(p) : !existsSync(join(checkout, p))));
    if (differ.code !== 0 || !asItStands) return null;
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
  const moved = await git(checkout, ['update-ref', '-m', message, `refs/heads/${into}`, commit, s.target]);
  if (moved.code !== 0) return { ok: false, why: gitWhy(moved) };
  const index = await git(
    checkout,
    ['--literal-pathspecs', 'reset', '-q', '--pathspec-from-file=-', '--pathspec-file-nul'],
    env,
    paths.map((p) => `${p}\0`).join(''),
  );
  return index.code === 0
    ? { ok: true }
    : { ok: false, why: `${gitWhy(index)} (git reset -q in ${checkout} mends its index)` };
}

/** Commits everything left in the worktree, authored by the agent (it did the work). */
async function commitLeftovers(worktree: string, id: string, env: NodeJS.ProcessEnv = process.env): Promise<void> {
  const agent = { ...env, GIT_AUTHOR_NAME: id, GIT_AUTHOR_EMAIL: `${id}@flotilla` };
  const add = await git(worktree, ['add', '-A'], agent);
  const r =
    add.code === 0
      ? await git(worktree, ['commit', '-q', '-m', `Work ${id} left uncommitted, committed at merge`], agent)
      : add;
  if (r.code !== 0)
    throw new FlotillaError(
      `committing what ${id} left in ${worktree} failed: ${gitWhy(r)} — commit it there yourself, then retry flotilla merge ${id}`,
      { code: 'merge' },
    );
}

/** The checkout that has `branch` checked out, if any (`git worktree list`). */
async function checkedOutAt(layout: Layout, branch: string): Promise<string | undefined> {
  const r = await git(layout.project, ['worktree', 'list', '--porcelain', '-z']);
  let path: string | undefined;
  for (const field of r.stdout.split('\0')) {
    if (field.startsWith('worktree ')) path = field.slice('worktree '.length);
    else if (field === `branch refs/heads/${branch}`) return path;
  }
  return undefined;
}
