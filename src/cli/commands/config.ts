import { Command } from 'commander';
import { cliConfig, cliContext } from '../context.js';
import { printJson } from '../output.js';

export function command(): Command {
  const cmd = new Command('config').description('show the effective config or its JSON schema');
  cmd
    .command('show')
    .description('print every effective value with its source (default, a file, env, flag)')
    .option('--json', 'print JSON: { key: { value, source } }')
    .action(async (opts: { json?: boolean }, sub: Command) => {
      const { layout } = cliContext(sub, { createState: false });
      const { config, sources } = await cliConfig(layout);
      const { getPath, leaves } = await import('../../config/walk.js');
      const { configSchema } = await import('../../config/schema.js');
      const rows = leaves(configSchema).map((l) => ({
        key: l.path,
        value: getPath(config, l.path),
        source: sources[l.path] ?? 'default',
      }));
      if (opts.json) {
        printJson(Object.fromEntries(rows.map((r) => [r.key, { value: r.value, source: r.source }])));
        return;
      }
      const width = Math.max(...rows.map((r) => r.key.length));
      for (const r of rows) {
        process.stdout.write(`${r.key.padEnd(width)}  ${JSON.stringify(r.value)}  (${r.source})\n`);
      }
    });
  cmd
    .command('schema')
    .description('print the config JSON Schema')
    .action(async () => {
      const { z } = await import('zod');
      const { configSchema } = await import('../../config/schema.js');
      printJson(z.toJSONSchema(configSchema, { io: 'input' }));
    });
  return cmd;
}
