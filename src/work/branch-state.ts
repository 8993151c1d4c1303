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
  /** The merged tree when the base moved and there is no conflict (null for a fast-forward). */
  tree: string | null;
}

/** Every local branch's tip, from one `git for-each-ref` (refs/heads/<name> → commit). */
export async function branchTips(layout: Layout): Promise<Map<string, string>> {
  const r = await git(layout.project, ['for-each-ref', '--format=%(objectname) %(refname)', 'refs/heads/']);
  return new Map(r.stdout.split('\n').filter(Boolean).map((l) => [l.slice(l.indexOf(' ') + 1), l.slice(0, l.indexOf(' '))] as const));
}

/**
 * `tips`: branch tips already read (`branchTips`), so many agents' states cost one ref read.
 * A branch the base has not moved past merges as a fast-forward: merge-tree runs only when
 * the base has commits the branch lacks.
 */
export async function branchState(layout: Layout, branch: string, base: { branch: string | null; commit: string }, tips?: ReadonlyMap<string, string>): Promise<BranchState> {
  const p = layout.project;
  const tip = async (name: string) => (tips ? tips.get(`refs/heads/${name}`) : await git(p, ['rev-parse', '--verify', '-q', `refs/heads/${name}`]).then((r) => (r.code === 0 ? r.stdout.trim() : undefined)));
  const [baseTip, own] = await Promise.all([base.branch ? tip(base.branch) : Promise.resolve(undefined), tip(branch)]);
  const target = baseTip ?? base.commit;
  if (!own) return { exists: false, target, ahead: 0, behind: 0, files: [], conflicts: [], tree: null };
  const [counts, names] = await Promise.all([
    git(p, ['rev-list', '--left-right', '--count', `${target}...${own}`]),
    git(p, ['diff', '--name-only', '-z', `${target}...${own}`]),
  ]);
  const [behind, ahead] = counts.stdout.trim().split(/\s+/).map(Number);
  const files = names.stdout.split('\0').filter(Boolean);
  if (!behind) return { exists: true, target, ahead: ahead ?? 0, behind: 0, files, conflicts: [], tree: null };
  const merged = await git(p, ['merge-tree', '--write-tree', '--name-only', '--no-messages', '-z', target, own]);
  // merge-tree -z: the tree, then each conflicted file, NUL-separated; exit 1 on conflict.
  const out = merged.stdout.split('\0').filter(Boolean);
  return {
    exists: true, target, ahead: ahead ?? 0, behind,
    files,
    conflicts: merged.code === 1 ? [...new Set(out.slice(1))] : [],
    tree: merged.code === 0 ? (out[0] ?? null) : null,
  };
}
