import { existsSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import type { AgentRecord } from '../fleet/record.js';
import type { Layout } from '../layout/layout.js';
import { git, gitEach } from './git.js';

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
  return (await agentWorks(layout, [rec]))[0]!;
}

/** `agentWork` for many agents: their worktrees' `git status` run together (`gitEach`). */
export async function agentWorks(layout: Layout, recs: readonly AgentRecord[]): Promise<AgentWork[]> {
  const worktrees = recs.map((r) => (r.worktree && existsSync(r.worktree) ? r.worktree : null));
  const present = worktrees.filter((w): w is string => w !== null);
  const statuses = await gitEach(present, STATUS, Math.min(4, availableParallelism()));
  const changed = new Map(present.map((w, k) => [w, statuses[k]!.code === 0 ? statusCount(statuses[k]!.stdout) : 0]));
  return Promise.all(
    recs.map(async (rec, k): Promise<AgentWork> => {
      if (!rec.worktree) return { kind: 'in-place', id: rec.id, cwd: rec.cwd };
      const branch = branchOf(rec.id);
      const base = rec.base ?? (await guessedBase(layout, branch));
      const worktree = worktrees[k] ?? null;
      return {
        kind: 'branch',
        id: rec.id,
        branch,
        base,
        worktree,
        uncommitted: worktree ? (changed.get(worktree) ?? 0) : 0,
      };
    }),
  );
}

const STATUS = ['status', '--porcelain', '--untracked-files=all'];
const statusCount = (out: string) => out.split('\n').filter(Boolean).length;

/** For a record from before bases were kept: where its branch left the project's HEAD. */
async function guessedBase(layout: Layout, branch: string): Promise<{ branch: string | null; commit: string }> {
  const [head, mb] = await Promise.all([
    git(layout.project, ['symbolic-ref', '--short', '-q', 'HEAD']),
    git(layout.project, ['merge-base', 'HEAD', branch]),
  ]);
  return { branch: head.code === 0 ? head.stdout.trim() : null, commit: mb.stdout.trim() };
}
