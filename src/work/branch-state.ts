import type { Layout } from '../layout/layout.js';
import { git } from './git.js';

/** How an agent's branch stands against its base branch now (`review`, `merge`). */
export interface BranchState {
  /** Whether `flotilla/<id>` still exists. */
  exists: boolean;
  /** The base branch's tip now (the base commit when the worktree was made from a detached HEAD, or the branch is gone). */
  target: string;
  /** Commits on the agent's branch not on the base branch, and the reverse. */
  ahead: number;
  behind: number;
  /** Files the branch changes since it left the base branch. */
  files: string[];
  /** Files a merge would conflict on (`git merge-tree --write-tree`, nothing written to any checkout). */
  conflicts: string[];
  /** The merged tree when there is no conflict. */
  tree: string | null;
}

export async function branchState(layout: Layout, branch: string, base: { branch: string | null; commit: string }): Promise<BranchState> {
  const p = layout.project;
  const [tip, own] = await Promise.all([
    base.branch ? git(p, ['rev-parse', '--verify', '-q', `refs/heads/${base.branch}`]) : Promise.resolve(null),
    git(p, ['rev-parse', '--verify', '-q', `refs/heads/${branch}`]),
  ]);
  const target = tip?.code === 0 ? tip.stdout.trim() : base.commit;
  if (own.code !== 0) return { exists: false, target, ahead: 0, behind: 0, files: [], conflicts: [], tree: null };
  const [counts, names, merged] = await Promise.all([
    git(p, ['rev-list', '--left-right', '--count', `${target}...${branch}`]),
    git(p, ['diff', '--name-only', '-z', `${target}...${branch}`]),
    git(p, ['merge-tree', '--write-tree', '--name-only', '--no-messages', '-z', target, branch]),
  ]);
  const [behind, ahead] = counts.stdout.trim().split(/\s+/).map(Number);
  // merge-tree -z: the tree, then each conflicted file, NUL-separated; exit 1 on conflict.
  const out = merged.stdout.split('\0').filter(Boolean);
  return {
    exists: true, target, ahead: ahead ?? 0, behind: behind ?? 0,
    files: names.stdout.split('\0').filter(Boolean),
    conflicts: merged.code === 1 ? [...new Set(out.slice(1))] : [],
    tree: merged.code === 0 ? (out[0] ?? null) : null,
  };
}
