import { Command } from 'commander';
import { cliContext } from '../context.js';

/** `flotilla review` (§12): the work finished and idle agents left on their branches. */
export function command(): Command {
  return new Command('review')
    .description('list finished and idle agents with work on their branches: commits ahead, files changed, conflicts with the base branch, leases held')
    .option('--json', 'print the rows as JSON')
    .action(async (opts: { json?: boolean }, cmd: Command) => {
      const { layout } = cliContext(cmd);
      const [{ listRecords }, { reviewWork }, { printJson }] = await Promise.all([import('../../fleet/registry.js'), import('../../work/review.js'), import('../output.js')]);
      const rows = await reviewWork(layout, listRecords(layout));
      if (opts.json) return printJson(rows);
      if (rows.length === 0) return void process.stdout.write('no agent has work waiting: worktree agents that finished or are idle with commits or uncommitted files show here\n');
      for (const r of rows) {
        const head = `${r.id} (${r.status})  ${r.branch} → ${r.base ?? '(detached)'}  ${r.ahead} ahead, ${r.behind} behind, ${r.files.length} file${r.files.length === 1 ? '' : 's'}`;
        const notes = [
          r.uncommitted ? `${r.uncommitted} uncommitted` : '',
          r.conflicts.length ? `CONFLICTS: ${r.conflicts.join(', ')}` : r.ahead ? 'merges cleanly' : '',
          r.leases.length ? `leases: ${r.leases.join(', ')}` : '',
        ].filter(Boolean);
        process.stdout.write(`${head}${notes.length ? `  — ${notes.join('; ')}` : ''}\n`);
      }
    });
}
