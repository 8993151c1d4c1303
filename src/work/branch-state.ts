import { availableParallelism } from 'node:os';
import type { Layout } from '../layout/layout.js';
import { changedSince, readChanged, standings } from './ahead-behind.js';
import { git } from './git.js';

/** How an agent's branch stands against its base branch now (`review`, `merge`). */
export interface BranchState {
  /** Whether `flotilla/<id>` still exists. */
  exists: boolean;
  /**
   * The base branch's tip now (the base commit when the worktree was made from a detached HEAD, or the branch is gone).
   */
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
  return new Map(
    r.stdout
      .split('\n')
      .filter(Boolean)
      .map((l) => [l.slice(l.indexOf(' ') + 1), l.slice(0, l.indexOf(' '))] as const),
  );
}

/** An agent's branch and the base its worktree was made from. */
export interface BranchOf {
  branch: string;
  base: { branch: string | null; commit: string };
}

/** One branch's state (`merge`, `gc`): the batch of one. */
export async function branchState(layout: Layout, branch: string, base: BranchOf['base']): Promise<BranchState> {
  return (await branchStates(layout, [{ branch, base }]))[0]!;
}

/**
 * Many branches' states from a fixed number of git processes, whatever their number
 * (docs/benchmarks-work.md, "Review of 50 worktree agents"): one ref read (`tips`, when not given),
 * ahead, behind and merge bases from one history read (`standings`), every file list from one
 * `diff-tree --stdin` (beside the history read when the worktrees share their base commit).
 * Only `merge-tree` runs per branch, and only for a branch the base has moved past: one the
 * base has not moved past merges as a fast-forward and cannot conflict.
 */
export async function branchStates(
  layout: Layout,
  items: readonly BranchOf[],
  tips?: ReadonlyMap<string, string>,
): Promise<BranchState[]> {
  const p = layout.project;
  const refs = tips ?? (await branchTips(layout));
  const targets = items.map(
    (i) => (i.base.branch ? refs.get(`refs/heads/${i.base.branch}`) : undefined) ?? i.base.commit,
  );
  const owns = items.map((i) => refs.get(`refs/heads/${i.branch}`));
  const live = items.flatMap((_, k) => (owns[k] ? [k] : []));
  // Worktrees made from one commit (a lead's fan-out, a person's batch): that commit is where
  // the history read starts, and most likely each branch's merge base, so the file lists are
  // read beside the counts from it, and read again only for a branch whose base is another.
  const bases = new Set(live.map((k) => items[k]!.base.commit));
  const only = [...bases][0];
  const floor = bases.size === 1 && only && /^[0-9a-f]{40,64}$/.test(only) ? only : undefined;
  const early = live.filter((k) => owns[k] !== items[k]!.base.commit);
  const [counts, guessed] = await Promise.all([
    standings(
      p,
      live.map((k) => ({ own: owns[k]!, target: targets[k]! })),
      undefined,
      floor,
    ),
    floor
      ? readChanged(
          p,
          early.map((k) => ({ own: owns[k]!, base: floor })),
        )
      : null,
  ]);
  const at = new Map(live.map((k, n) => [k, counts[n]!]));
  const guessOf = new Map(guessed ? early.map((k, n) => [k, guessed[n]!]) : []);
  const moved = live.filter((k) => at.get(k)!.ahead > 0);
  const baseOf = (k: number) => at.get(k)!.base ?? targets[k]!;
  const guess = (k: number) => (baseOf(k) === floor ? guessOf.get(k) : undefined);
  const rest = moved.filter((k) => !guess(k));
  const files = await changedSince(
    p,
    rest.map((k) => ({ own: owns[k]!, base: baseOf(k) })),
  );
  const filesOf = new Map([
    ...moved.flatMap((k) => (guess(k) ? [[k, guess(k)!] as const] : [])),
    ...rest.map((k, n) => [k, files[n]!] as const),
  ]);
  return inBatches(
    items.map((_, k) => k),
    GIT_AT_ONCE,
    async (k): Promise<BranchState> => {
      const target = targets[k]!;
      const c = at.get(k);
      if (!c) return { exists: false, target, ahead: 0, behind: 0, files: [], conflicts: [], tree: null };
      const state = {
        exists: true,
        target,
        ahead: c.ahead,
        behind: c.behind,
        files: filesOf.get(k) ?? [],
        conflicts: [] as string[],
        tree: null as string | null,
      };
      if (!c.behind || !c.ahead) return state;
      const merged = await git(p, [
        'merge-tree',
        '--write-tree',
        '--name-only',
        '--no-messages',
        '-z',
        target,
        owns[k]!,
      ]);
      // merge-tree -z: the tree, then each conflicted file, NUL-separated; exit 1 on conflict.
      const out = merged.stdout.split('\0').filter(Boolean);
      return {
        ...state,
        conflicts: merged.code === 1 ? [...new Set(out.slice(1))] : [],
        tree: merged.code === 0 ? (out[0] ?? null) : null,
      };
    },
  );
}

/** git processes a batch runs at once: fifty at once only thrash a small machine. */
const GIT_AT_ONCE = Math.max(2, Math.min(8, availableParallelism() * 2));

/** `fn` over `items`, at most `n` running at once, results in order. */
async function inBatches<T, R>(items: readonly T[], n: number, fn: (item: T) => Promise<R>): Promise<R[]> {
  const out: R[] = new Array<R>(items.length);
  let next = 0;
  const worker = async (): Promise<void> => {
    for (let i = next++; i < items.length; i = next++) out[i] = await fn(items[i]!);
  };
  await Promise.all(Array.from({ length: Math.min(n, items.length) }, worker));
  return out;
}
