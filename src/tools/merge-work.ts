import { z } from 'zod';
import type { Tool } from './types.js';
import type { ToolSpec } from './spec.js';

/**
 * merge_work (docs/design.md §12): a lead takes a descendant's work — its branch into the
 * branch its worktree was made from, as `flotilla merge` does. What it does is injected
 * (src/work/merge-ops.ts), bound to the calling agent, so only its own subtree is reachable.
 */

/** What the tool shows the model: the same outcome `flotilla merge --json` prints. */
export type MergeWorkResult =
  | {
      id: string;
      merged: true;
      how: 'fast-forward' | 'merge' | 'up-to-date';
      branch: string;
      into: string;
      commit: string;
      committedFirst: boolean;
    }
  | { id: string; merged: false; branch: string; into: string; conflicts: { path: string; holders: string[] }[] };

export interface MergeWorkOperations {
  /** Refuses (throws) an agent that is not the caller's descendant, still working, or with nothing to merge. */
  merge(prefix: string, opts: { commit: boolean }): Promise<MergeWorkResult>;
}

const input = z.object({
  id: z.string().min(1).describe('The agent whose branch to merge: one of your descendants (id or unique prefix)'),
  commit: z.boolean().optional().describe('First commit what it left uncommitted in its worktree, as that agent'),
});

export function createMergeWorkTool(ops: MergeWorkOperations): Tool<z.infer<typeof input>> {
  return {
    name: 'merge_work',
    description:
      'Merge a descendant\'s worktree branch into the branch its worktree was made from: fast-forward when it can, a merge commit otherwise; on conflict nothing is merged and the files are listed. Example: {"id": "worker-7k2m9q"}',
    inputSchema: input,
    // It can move the person's checked-out branch and rewrite the files there: a write, asked in default mode.
    klass: 'write',
    inputExample: { id: 'worker-7k2m9q' },
    async execute(i) {
      const r = await ops.merge(i.id, { commit: i.commit ?? false });
      if (r.merged) {
        const first = r.committedFirst ? `Committed what ${r.id} left uncommitted, then ` : '';
        const what =
          r.how === 'up-to-date'
            ? `nothing to merge: ${r.into} already has ${r.branch}.`
            : `merged ${r.branch} into ${r.into} (${r.how}), now at ${r.commit.slice(0, 12)}.`;
        return { output: first ? first + what : capitalized(what), meta: { ...r } };
      }
      const files = r.conflicts.map(
        (c) => `  ${c.path}${c.holders.length ? `  (leased by ${c.holders.join(', ')})` : ''}`,
      );
      return {
        output: [
          `Not merged: ${r.branch} conflicts with ${r.into} in ${r.conflicts.length} file${r.conflicts.length === 1 ? '' : 's'}; nothing was changed. Ask ${r.id} to rebase on ${r.into} and resolve them, then merge again.`,
          ...files,
        ].join('\n'),
        isError: true,
        meta: { ...r },
      };
    },
  };
}

const capitalized = (s: string) => s.charAt(0).toUpperCase() + s.slice(1);

export const mergeWorkTool: ToolSpec = {
  name: 'merge_work',
  paneLine: (i) => `merge_work ${i.text('id', '?')}`,
  prompt: {
    section: 'delegation',
    text: '- A child spawned with worktree: true commits on its own branch; merge_work brings its branch into the branch its worktree was made from once it is done.',
  },
  create: ({ merge }) => merge && (createMergeWorkTool(merge) as Tool),
};
