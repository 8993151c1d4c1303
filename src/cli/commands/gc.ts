import { Command } from 'commander';
import { cliConfig, cliContext } from '../context.js';

/** `flotilla gc`: clean up after finished agents (dead panes, records, markers, worktrees, old transcripts). */
export function command(): Command {
  return new Command('gc')
    .description(
      'clean up finished agents: dead panes, registry records, markers, merged worktrees and their branches (unmerged ones kept unless --force), old transcripts; on a nats:// bus, then the same records and the trees nothing belongs to any more from the bus',
    )
    .option('--older-than <secs>', 'only agents that finished at least this many seconds ago', '0')
    .option('--keep-branches', 'keep the branches of the merged worktrees it removes')
    .option('--force', 'also remove the worktrees and branches of finished agents whose work is not merged')
    .option('--json', 'print what was removed as JSON')
    .action(
      async (opts: { olderThan: string; keepBranches?: boolean; force?: boolean; json?: boolean }, cmd: Command) => {
        const { layout } = cliContext(cmd);
        const { config } = await cliConfig(layout);
        const [{ gcFleet }, { UsageError }, { printJson }] = await Promise.all([
          import('../../lifecycle/gc.js'),
          import('../../errors.js'),
          import('../output.js'),
        ]);
        const secs = Number(opts.olderThan);
        if (!(secs >= 0))
          throw new UsageError(
            `--older-than must be a number of seconds ≥ 0, got '${opts.olderThan}' — e.g. --older-than 3600`,
          );
        const r = await gcFleet(layout, config, {
          olderThanMs: secs * 1000,
          keepBranches: opts.keepBranches,
          force: opts.force,
        });
        if (opts.json) return printJson(r);
        process.stdout.write(
          `removed ${r.records.length} records, ${r.panes.length} dead panes, ${r.worktrees.length} worktrees, ${r.branches.length} branches, ${r.retention.transcripts.length} transcripts, ${r.retention.outputs.length} outputs\n`,
        );
        for (const u of r.unmerged) {
          const why = [
            u.ahead ? `${u.ahead} commit${u.ahead === 1 ? '' : 's'} not merged` : '',
            u.uncommitted ? `${u.uncommitted} uncommitted file${u.uncommitted === 1 ? '' : 's'}` : '',
            u.unimported ? `commits not brought into the repository (${u.unimported})` : '',
          ];
          process.stdout.write(
            `kept ${u.branch} and ${u.inPlace ? 'its git dir (it worked in place)' : 'its worktree'}: ${why.filter(Boolean).join(', ')} — flotilla merge ${u.id}, or gc --force to drop it\n`,
          );
        }
        if (r.corrupt.length > 0)
          process.stdout.write(
            `set aside ${r.corrupt.length} corrupt record${r.corrupt.length === 1 ? '' : 's'} (${r.corrupt.join(', ')}) in state/agents/corrupt/\n`,
          );
        for (const p of [...r.problems, ...r.retention.problems]) process.stderr.write(`flotilla: warning: ${p}\n`);
        if (r.bus?.skipped === null)
          process.stdout.write(
            `removed from the bus ${r.bus.url}: ${r.bus.records.length} ended records, ${r.bus.trees.length} trees' spawn counters, ${r.bus.markers} once-markers\n`,
          );
        else if (r.bus)
          process.stderr.write(
            `flotilla: warning: gc skipped the bus, nothing was removed from it: ${r.bus.skipped}; run flotilla gc again when the bus is back\n`,
          );
      },
    );
}
