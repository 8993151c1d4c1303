import { Command } from 'commander';
import { cliConfig, cliContext } from '../context.js';

/** `flotilla gc`: clean up after finished agents (dead panes, records, markers, worktrees, old transcripts). */
export function command(): Command {
  return new Command('gc')
    .description("clean up finished agents: dead panes, registry records, markers, worktrees (branches kept), old transcripts; on a nats:// bus, then the same records and the trees nothing belongs to any more from the bus")
    .option('--older-than <secs>', 'only agents that finished at least this many seconds ago', '0')
    .option('--json', 'print what was removed as JSON')
    .action(async (opts: { olderThan: string; json?: boolean }, cmd: Command) => {
      const { layout } = cliContext(cmd);
      const { config } = await cliConfig(layout);
      const [{ gcFleet }, { UsageError }, { printJson }] = await Promise.all([import('../../spawn/gc.js'), import('../../errors.js'), import('../output.js')]);
      const secs = Number(opts.olderThan);
      if (!(secs >= 0)) throw new UsageError(`--older-than must be a number of seconds ≥ 0, got '${opts.olderThan}' — e.g. --older-than 3600`);
      const r = await gcFleet(layout, config, { olderThanMs: secs * 1000 });
      if (opts.json) return printJson(r);
      process.stdout.write(`removed ${r.records.length} records, ${r.panes.length} dead panes, ${r.worktrees.length} worktrees, ${r.retention.transcripts.length} transcripts, ${r.retention.outputs.length} outputs\n`);
      if (r.corrupt.length > 0) process.stdout.write(`set aside ${r.corrupt.length} corrupt record${r.corrupt.length === 1 ? '' : 's'} (${r.corrupt.join(', ')}) in state/agents/corrupt/\n`);
      for (const p of [...r.problems, ...r.retention.problems]) process.stderr.write(`flotilla: warning: ${p}\n`);
      if (r.bus?.skipped === null) process.stdout.write(`removed from the bus ${r.bus.url}: ${r.bus.records.length} ended records, ${r.bus.trees.length} trees' spawn counters, ${r.bus.markers} once-markers\n`);
      else if (r.bus) process.stderr.write(`flotilla: warning: gc skipped the bus, nothing was removed from it: ${r.bus.skipped}; run flotilla gc again when the bus is back\n`);
    });
}
