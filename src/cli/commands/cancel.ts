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
      const [
        { resolveAgent },
        { cancelAgent },
        { senderIdentity },
        { subtreeRecords },
        { FlotillaError },
        { printJson },
      ] = await Promise.all([
        import('../../fleet/registry.js'),
        import('../../lifecycle/cancel.js'),
        import('../../inbox/address.js'),
        import('../../fleet/live.js'),
        import('../../errors.js'),
        import('../output.js'),
      ]);
      const by = senderIdentity(layout);
      // An agent another host runs (§17.6): cancelled there, once this caller may (its own subtree).
      const elsewhere = await import('../../hosts/elsewhere.js');
      const records = async () => (await import('../../bus/open.js')).busFor(layout, config).records;
      const far = await elsewhere.agentsElsewhere(layout, config, [prefix], records);
      if (far) {
        const rec = far.records[0]!;
        if (by !== 'human' && !(await elsewhere.descendsFrom(await records(), rec, by))) {
          throw new FlotillaError(
            `'${rec.id}' is not one of your agents — you may cancel only agents you spawned (and theirs); see flotilla status`,
            { code: 'not-yours' },
          );
        }
        const { passThrough } = await import('../../hosts/pass-through.js');
        process.exitCode = await passThrough(far.host, [
          'cancel',
          rec.id,
          ...(opts.tree ? ['--tree'] : []),
          ...(opts.json ? ['--json'] : []),
        ]);
        return;
      }
      const target = resolveAgent(layout, prefix);
      // An agent's command cancels what its cancel_agent tool may (spawn/ops.ts): only its own
      // subtree — from its shell and, in its sandbox, through its door alike.
      if (by !== 'human' && !subtreeRecords(layout, by).some((r) => r.id === target.id)) {
        throw new FlotillaError(
          `'${target.id}' is not one of your agents — you may cancel only agents you spawned (and theirs); see flotilla status`,
          { code: 'not-yours' },
        );
      }
      // Its descendants on other hosts (§17.7) are theirs to end: asked there.
      const { cancelled: hit, notes } = await cancelAgent(layout, config, target, { tree: opts.tree, by });
      for (const n of notes) process.stderr.write(`flotilla: ${n}\n`);
      if (opts.json) printJson({ cancelled: hit });
      else if (hit.length) process.stdout.write(`cancelled ${hit.join(', ')}\n`);
      else process.stdout.write(`${target.id} had already ended (${target.status})\n`);
    });
}
