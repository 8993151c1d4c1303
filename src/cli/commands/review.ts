import { contextOf, noFleetLine, type Globals } from '../context.js';
import { writeOut } from '../output.js';
import type { CommandSpec, Parsed } from '../spec.js';

/** `flotilla review` (§12): the work finished and idle agents left on their branches. On the fast path (fast.ts). */
export const spec: CommandSpec = {
  name: 'review',
  fast: true,
  description:
    'list finished and idle agents with work on their branches: commits ahead, files changed, conflicts with the base branch, leases held',
  args: [],
  options: [{ flags: '--json', description: 'print the rows as JSON' }],
};

export async function run(parsed: Parsed, globals: Globals): Promise<void> {
  const opts = parsed.opts as { json?: boolean };
  // A read-only look never makes a fleet root (it would show up in the person's checkout).
  const { layout } = contextOf(globals, { createState: false });
  const [{ listRecords }, { reviewWork }] = await Promise.all([
    import('../../fleet/registry.js'),
    import('../../work/review.js'),
  ]);
  const rows = noFleetLine(layout) ? [] : await reviewWork(layout, listRecords(layout));
  if (opts.json) return writeOut(JSON.stringify(rows, null, 2) + '\n');
  if (rows.length === 0)
    return writeOut(
      'no agent has work waiting: worktree agents that finished or are idle with commits or uncommitted files show here\n',
    );
  for (const r of rows) {
    const head = `${r.id} (${r.status})  ${r.branch} → ${r.base ?? '(detached)'}  ${r.ahead} ahead, ${r.behind} behind, ${r.files.length} file${r.files.length === 1 ? '' : 's'}`;
    const notes = [
      r.uncommitted ? `${r.uncommitted} uncommitted` : '',
      r.conflicts.length ? `CONFLICTS: ${r.conflicts.join(', ')}` : r.ahead ? 'merges cleanly' : '',
      r.leases.length ? `leases: ${r.leases.join(', ')}` : '',
    ].filter(Boolean);
    writeOut(`${head}${notes.length ? `  — ${notes.join('; ')}` : ''}\n`);
  }
}
