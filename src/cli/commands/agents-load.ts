import type { Command } from 'commander';
import type { Config } from '../../config/schema.js';
import type { LoadResult } from '../../definitions/types.js';
import type { Layout } from '../../layout/layout.js';
import { cliConfig, cliContext } from '../context.js';

/** Layout, config and every definition, as the `agents` subcommands need them. */
export async function loadForCli(cmd: Command): Promise<{ layout: Layout; config: Config; result: LoadResult }> {
  const { layout } = cliContext(cmd, { createState: false });
  const { config } = await cliConfig(layout);
  const { loadDefinitions } = await import('../../definitions/load.js');
  const result = await loadDefinitions({ layout, config });
  return { layout, config, result };
}
