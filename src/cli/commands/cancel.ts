import { Command } from 'commander';
import { cliConfig, cliContext } from '../context.js';

/** `flotilla cancel <id>` (§5.8): SIGTERM, SIGKILL after limits.cancel_grace_secs. */
export function command(): Command {
  return new Command('cancel')
    .description('cancel an agent and its foreground children (--tree: its whole subtree, background children too)')
    .argument('<id>', 'agent id or unique prefix')
    .option('--tree', 'cancel the whole subtree, background children included')
    .option('--json', 'print the cancelled ids as JSON')
    .action(async (prefix: string, opts: { tree?: boolean; json?: boolean }, cmd: Command) => {
      const { layout } = cliContext(cmd);
      const { config } = await cliConfig(layout);
      const [{ resolveAgent }, { cancelAgent }, { senderIdentity }, { printJson }] = await Promise.all([
        import('../../fleet/registry.js'), import('../../spawn/cancel.js'), import('../../inbox/address.js'), import('../output.js'),
      ]);
      const target = resolveAgent(layout, prefix);
      const hit = await cancelAgent(layout, config, target, { tree: opts.tree, by: senderIdentity(layout) });
      if (opts.json) printJson({ cancelled: hit });
      else if (hit.length) process.stdout.write(`cancelled ${hit.join(', ')}\n`);
      else process.stdout.write(`${target.id} had already ended (${target.status})\n`);
    });
}
