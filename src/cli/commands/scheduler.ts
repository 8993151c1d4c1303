import { Command } from 'commander';
import { cliConfig, cliContext } from '../context.js';

/** `flotilla scheduler`: the fleet's scheduler in the foreground (`flotilla up` runs it in its `schedule` window). */
export function command(): Command {
  return new Command('scheduler')
    .description('fire the fleet\'s schedules (one per fleet root; a second waits); runs until Ctrl-C or SIGTERM')
    .action(async (_opts: unknown, cmd: Command) => {
      const { layout } = cliContext(cmd);
      const { runScheduler } = await import('../../schedule/scheduler.js');
      const controller = new AbortController();
      for (const sig of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) process.once(sig, () => controller.abort());
      await runScheduler(layout, {
        signal: controller.signal,
        config: async () => (await cliConfig(layout)).config,
        log: (line) => process.stdout.write(`${new Date().toISOString().slice(11, 19)} ${line}\n`),
      });
    });
}
