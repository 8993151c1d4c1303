import { Command, Option } from 'commander';
import { cliConfig, cliContext } from '../context.js';

/** `flotilla watch` (§2): the live dashboard, loaded inside the action only. */
export function command(): Command {
  return new Command('watch')
    .description('live dashboard of the agent tree, redrawn on change; keys to attach, message, cancel, approve/deny')
    .addOption(new Option('--tick <secs>', 'refresh elapsed times this often').default('5').hideHelp())
    .action(async (opts: { tick: string }, cmd: Command) => {
      const { layout } = cliContext(cmd);
      // The dashboard's modules load while the config is read.
      const modules = Promise.all([import('../../watch/index.js'), import('../../tmux/client.js')]);
      modules.catch(() => undefined);
      const { config } = await cliConfig(layout);
      const [{ runWatch }, { tmuxSocket }] = await modules;
      const tick = Number(opts.tick);
      process.exitCode = await runWatch({
        layout, config,
        socket: tmuxSocket(config.tmux.socket),
        title: `flotilla · ${layout.project}`,
        statsFile: process.env.FLOTILLA_WATCH_STATS || undefined,
        tickMs: Number.isFinite(tick) && tick > 0 ? tick * 1000 : undefined,
      });
    });
}
