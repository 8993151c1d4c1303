import { Command } from 'commander';
import { cliContext } from '../context.js';
import { printJson } from '../output.js';

/** `flotilla collect` (§2): every finished, uncollected result, once (an open agent's finished task too). */
export function command(): Command {
  return new Command('collect')
    .description(
      "print every result not collected yet, once: each finished agent's, and the last finished task's of an agent still open in its window; tasks still running are skipped, never waited for",
    )
    .option('--json', 'print a JSON array of results')
    .action(async (opts: { json?: boolean }, cmd: Command) => {
      const { layout } = cliContext(cmd);
      const [{ collectFinished, formatCollected }, { listRecords }, { recordLiveness }] = await Promise.all([
        import('../../outputs/collect.js'),
        import('../../fleet/registry.js'),
        import('../../fleet/liveness.js'),
      ]);
      const results = collectFinished(layout, { warn: (m) => process.stderr.write(`flotilla: warning: ${m}\n`) });
      // An agent that ended hands out its last task's answer.
      const last = new Map(results.length ? listRecords(layout).map((x) => [x.id, x.lastTask?.task]) : []);
      const { commandReader, markHandedOn } = await import('../../lifecycle/handed-on.js');
      const reader = results.length ? await commandReader(layout) : null;
      if (reader)
        await markHandedOn(
          layout,
          reader,
          results.map((r) => ({ id: r.id, task: r.task ?? last.get(r.id) })),
        );
      if (opts.json) printJson(results);
      else process.stdout.write(results.map(formatCollected).join('\n'));
      // Idle agents were handed out above; what is skipped is work still under way.
      const running = listRecords(layout).filter((r) => recordLiveness(r) !== 'ended' && r.status !== 'idle').length;
      if (!opts.json && process.stderr.isTTY) {
        const note = results.length === 0 ? 'nothing new to collect' : `collected ${results.length}`;
        process.stderr.write(`flotilla: ${note}${running ? ` (${running} still running, skipped)` : ''}\n`);
      }
    });
}
