import { Command } from 'commander';
import { cliContext } from '../context.js';
import { printJson } from '../output.js';

/** `flotilla collect` (§2): every finished, uncollected agent's result, once. */
export function command(): Command {
  return new Command('collect')
    .description('print the result of every finished agent not collected yet, and mark it collected; running agents are skipped, never waited for')
    .option('--json', 'print a JSON array of results')
    .action(async (opts: { json?: boolean }, cmd: Command) => {
      const { layout } = cliContext(cmd);
      const [{ collectFinished, formatCollected }, { listRecords }, { recordLiveness }] = await Promise.all([
        import('../../outputs/collect.js'),
        import('../../fleet/registry.js'),
        import('../../fleet/liveness.js'),
      ]);
      const results = collectFinished(layout, { warn: (m) => process.stderr.write(`flotilla: warning: ${m}\n`) });
      if (opts.json) printJson(results);
      else process.stdout.write(results.map(formatCollected).join('\n'));
      const running = listRecords(layout).filter((r) => recordLiveness(r) !== 'ended').length;
      if (!opts.json && process.stderr.isTTY) {
        const note = results.length === 0 ? 'nothing new to collect' : `collected ${results.length}`;
        process.stderr.write(`flotilla: ${note}${running ? ` (${running} still running, skipped)` : ''}\n`);
      }
    });
}
