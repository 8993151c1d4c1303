import { Command } from 'commander';
import { cliConfig, cliContext } from '../context.js';

/** `flotilla scheduler`: the fleet's scheduler in the foreground (`flotilla up` runs it in its `schedule` window). */
export function command(): Command {
  return new Command('scheduler')
    .description("fire the fleet's schedules (one per fleet root; a second waits); runs until Ctrl-C or SIGTERM")
    .action(async (_opts: unknown, cmd: Command) => {
      const { layout } = cliContext(cmd);
      const [{ runScheduler }, { LiveDefinitions }, { loadDefinitions }, { definitionDirs }] = await Promise.all([
        import('../../schedule/scheduler.js'),
        import('../../definitions/live.js'),
        import('../../definitions/load.js'),
        import('../../definitions/locations.js'),
      ]);
      const config = async () => (await cliConfig(layout)).config;
      // Definitions are watched, so a `schedule:` block added, changed or removed counts within a second.
      const definitions = await LiveDefinitions.open({
        load: async () => loadDefinitions({ layout, config: await config() }),
        folders: definitionDirs(layout).map((d) => d.dir),
      });
      const controller = new AbortController();
      for (const sig of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) process.once(sig, () => controller.abort());
      try {
        await runScheduler(layout, {
          signal: controller.signal,
          config,
          definitions: () => definitions.current.definitions,
          log: (line) => process.stdout.write(`${new Date().toISOString().slice(11, 19)} ${line}\n`),
        });
      } finally {
        definitions.close();
      }
    });
}
