import { Command } from 'commander';
import { cliConfig, cliContext } from '../context.js';

/**
 * `flotilla reap` (§5.7, internal): run by an agent's pane and tmux's pane-died hook; ends agents whose harness died.
 */
export function command(): Command {
  return new Command('reap')
    .description(
      "internal: end agents whose harness died (run by an agent's pane and tmux's pane-died hook); without --pane, the whole fleet",
    )
    .option('--pane <id>', 'the tmux pane that died (%N)')
    .option('--socket <socket>', 'the tmux server of that pane')
    .option('--exit-status <n>', "how the pane's harness ended, as its sh saw it (128+N: killed by signal N)")
    .option('--json', 'print the ended records as JSON')
    .action(async (opts: { pane?: string; socket?: string; exitStatus?: string; json?: boolean }, cmd: Command) => {
      const status = opts.exitStatus === undefined ? undefined : Number(opts.exitStatus);
      if (status !== undefined && !(Number.isInteger(status) && status >= 0 && status <= 255)) {
        const { UsageError } = await import('../../errors.js');
        throw new UsageError(`--exit-status takes a status 0-255, got '${opts.exitStatus}' — e.g. --exit-status 137`);
      }
      if (status !== undefined && !opts.pane) {
        const { UsageError } = await import('../../errors.js');
        throw new UsageError("--exit-status goes with --pane: the status of that pane's harness");
      }
      const { layout } = cliContext(cmd);
      const { config } = await cliConfig(layout);
      const { reconcileDead } = await import('../../lifecycle/reconcile.js');
      const ended = await reconcileDead(
        layout,
        config,
        opts.pane ? { pane: { paneId: opts.pane, socket: opts.socket, exitStatus: status } } : {},
      );
      if (opts.json) process.stdout.write(JSON.stringify(ended, null, 2) + '\n');
      else for (const r of ended) process.stdout.write(`${r.id} ${r.status}: ${r.exitReason ?? ''}\n`);
    });
}
