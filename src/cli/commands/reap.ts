import { Command } from 'commander';
import { cliConfig, cliContext } from '../context.js';

/** `flotilla reap` (§5.7, internal): run by tmux's pane-died hook; ends agents whose harness died. */
export function command(): Command {
  return new Command('reap')
    .description(
      'internal: end agents whose harness died (run by the tmux pane-died hook); without --pane, the whole fleet',
    )
    .option('--pane <id>', 'the tmux pane that died (%N)')
    .option('--socket <socket>', 'the tmux server of that pane')
    .option('--json', 'print the ended records as JSON')
    .action(async (opts: { pane?: string; socket?: string; json?: boolean }, cmd: Command) => {
      const { layout } = cliContext(cmd);
      const { config } = await cliConfig(layout);
      const { reconcileDead } = await import('../../lifecycle/reconcile.js');
      const ended = await reconcileDead(
        layout,
        config,
        opts.pane ? { pane: { paneId: opts.pane, socket: opts.socket } } : {},
      );
      if (opts.json) process.stdout.write(JSON.stringify(ended, null, 2) + '\n');
      else for (const r of ended) process.stdout.write(`${r.id} ${r.status}: ${r.exitReason ?? ''}\n`);
    });
}
