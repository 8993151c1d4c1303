import { existsSync } from 'node:fs';
import type { AgentRecord } from '../fleet/record.js';
import type { Layout } from '../layout/layout.js';
import { git } from './git.js';

/**
 * Where an agent's work is (docs/design.md §12): on its branch `flotilla/<id>` in a worktree,
 * measured from the commit the worktree was made from; or, for an agent that worked in
 * place, uncommitted in the checkout it shares with the person.
 */
export type AgentWork =
  | {
      kind: 'branch';
      id: string;
      branch: string;
      /** The branch its worktree was made from (null: a detached HEAD) and that commit. */
      base: { branch: string | null; commit: string };
      worktree: string | null;
      /** Files changed in the worktree and not committed; 0 when the worktree is gone. */
      uncommitted: number;
    }
  | { kind: 'in-place'; id: string; cwd: string };

export const branchOf = (id: string) => `flotilla/${id}`;

export async function agentWork(layout: Layout, rec: AgentRecord): Promise<AgentWork> {
  if (!rec.worktree) return { kind: 'in-place', id: rec.id, cwd: rec.cwd };
  const branch = branchOf(rec.id);
  const base = rec.base ?? (await guessedBase(layout, branch));
  const worktree = existsSync(rec.worktree) ? rec.worktree : null;
  const uncommitted = worktree ? await changedFiles(worktree) : 0;
  return { kind: 'branch', id: rec.id, branch, base, worktree, uncommitted };
}

/** For a record from before bases were kept: where its branch left the project's HEAD. */
async function guessedBase(layout: Layout, branch: string): Promise<{ branch: string | null; commit: string }> {
  const [head, mb] = await Promise.all([git(layout.project, ['symbolic-ref', '--short', '-q', 'HEAD']), git(layout.project, ['merge-base', 'HEAD', branch])]);
  return { branch: head.code === 0 ? head.stdout.trim() : null, commit: mb.stdout.trim() };
}

/** How many files `git status` lists as changed or untracked in a checkout. */
export async function changedFiles(checkout: string): Promise<number> {
  const r = await git(checkout, ['status', '--porcelain', '--untracked-files=all']);
  return r.code === 0 ? r.stdout.split('\n').filter(Boolean).length : 0;
}
