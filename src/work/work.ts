import { existsSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import type { AgentRecord } from '../fleet/record.js';
import type { Layout } from '../layout/layout.js';
import { git, gitEach } from './git.js';
import { importInPlaceBranches } from './import-branch.js';
import { statusCount, uncommittedCounts } from './status-cache.js';

/**
 * Where an agent's work is (docs/design.md §12): on its branch `flotilla/<id>`, measured from
 * the commit its worktree (or, in place, its own git dir) was made from; or, for an agent
 * that worked in place with no branch (outside the project, or before it had a commit),
 * uncommitted in the checkout it shares with the person.
 */
export type AgentWork =
  | {
      kind: 'branch';
      id: string;
      branch: string;
      /** The branch its worktree was made from (null: a detached HEAD) and that commit. */
      base: { branch: string | null; commit: string };
      worktree: string | null;
      /**
       * An in-place agent's checkout, the person's own (its files there are shared; its HEAD and
       * index are its own, work/in-place.ts); null for a worktree agent.
       */
      checkout: string | null;
      /** Files changed in the worktree and not committed; 0 when the worktree is gone, and in place. */
      uncommitted: number;
      /** In place: why its latest commits could not be brought into the repository (import-branch.ts). */
      unimported?: string;
    }
  | { kind: 'in-place'; id: string; cwd: string };

export const branchOf = (id: string) => `flotilla/${id}`;

/** The agents among `recs` working in place on a branch (their records keep a base and no worktree). */
export const inPlaceBranches = (recs: readonly AgentRecord[]): { id: string; branch: string }[] =>
  recs.flatMap((r) => (!r.worktree && r.base ? [{ id: r.id, branch: branchOf(r.id) }] : []));

export async function agentWork(layout: Layout, rec: AgentRecord): Promise<AgentWork> {
  return (await agentWorks(layout, [rec]))[0]!;
}

/**
 * `agentWork` for many agents: their worktrees' `git status` run together (`gitEach`). With
 * `cached` (`review`), a worktree unchanged since the last count is not asked again
 * (`uncommittedCounts`); `merge` and `gc` always ask git.
 */
export async function agentWorks(layout: Layout, recs: readonly AgentRecord[], cached = false): Promise<AgentWork[]> {
  const [works, counts] = await Promise.all([workPlaces(layout, recs), uncommittedOf(layout, recs, cached)]);
  return works.map((w) => (w.kind === 'branch' && w.worktree ? { ...w, uncommitted: counts.get(w.worktree) ?? 0 } : w));
}

/**
 * Where each agent's work is, its uncommitted count left 0: no worktree is looked into. An
 * in-place agent's commits are brought into the repository first, so its branch there is
 * what every reader of it sees (import-branch.ts).
 */
export async function workPlaces(layout: Layout, recs: readonly AgentRecord[]): Promise<AgentWork[]> {
  const unimported = await importInPlaceBranches(layout, inPlaceBranches(recs));
  return Promise.all(
    recs.map(async (rec): Promise<AgentWork> => {
      const branch = branchOf(rec.id);
      if (!rec.worktree) {
        if (!rec.base) return { kind: 'in-place', id: rec.id, cwd: rec.cwd };
        return {
          kind: 'branch',
          id: rec.id,
          branch,
          base: rec.base,
          worktree: null,
          checkout: rec.cwd,
          uncommitted: 0,
          ...(unimported.has(rec.id) ? { unimported: unimported.get(rec.id)! } : {}),
        };
      }
      const base = rec.base ?? (await guessedBase(layout, branch));
      const worktree = existsSync(rec.worktree) ? rec.worktree : null;
      return { kind: 'branch', id: rec.id, branch, base, worktree, checkout: null, uncommitted: 0 };
    }),
  );
}

/** The files not committed in each agent's worktree that is still there, by worktree. */
export async function uncommittedOf(
  layout: Layout,
  recs: readonly AgentRecord[],
  cached: boolean,
): Promise<Map<string, number>> {
  const present = recs.flatMap((r) => (r.worktree && existsSync(r.worktree) ? [r.worktree] : []));
  const shells = Math.min(4, availableParallelism());
  const counts = cached
    ? await uncommittedCounts(present, STATUS, shells, layout.worktreeStatusCache)
    : (await gitEach(present, STATUS, shells)).map((r) => (r.code === 0 ? statusCount(r.stdout) : 0));
  return new Map(present.map((w, k) => [w, counts[k]!]));
}

const STATUS = ['status', '--porcelain', '--untracked-files=all'];

/**
 * A worktree agent's uncommitted count, taken on the host as its task ends and kept as `review`
 * keeps one (status-cache.ts), so the person's first review after agents finish asks git nothing
 * of a worktree unchanged since (docs/benchmarks-work.md, "Seventh round"). A worktree written in
 * the settle window (an agent whose last command wrote just before its end) is not kept; the
 * count is never the truth (review checks its key), and one that fails costs that review one
 * `git status`, nothing else.
 */
export async function keepCountAtEnd(layout: Layout, rec: AgentRecord): Promise<void> {
  await uncommittedOf(layout, [rec], true).catch(() => undefined);
}

/** For a record from before bases were kept: where its branch left the project's HEAD. */
async function guessedBase(layout: Layout, branch: string): Promise<{ branch: string | null; commit: string }> {
  const [head, mb] = await Promise.all([
    git(layout.project, ['symbolic-ref', '--short', '-q', 'HEAD']),
    git(layout.project, ['merge-base', 'HEAD', branch]),
  ]);
  return { branch: head.code === 0 ? head.stdout.trim() : null, commit: mb.stdout.trim() };
}
