import { Command } from 'commander';
import { cliContext } from '../context.js';

/** `flotilla merge <id>` (§12): an agent's branch into the branch its worktree was made from. */
export function command(): Command {
  return new Command('merge')
    .description(
      "merge an agent's branch into the branch its worktree was made from: fast-forward when it can, a merge commit otherwise; on conflict nothing is merged (exit 1)",
    )
    .argument('<id>', 'agent id or unique prefix')
    .option('--commit', 'first commit what the agent left uncommitted in its worktree, as the agent')
    .option('--json', 'print the outcome as JSON')
    .action(async (prefix: string, opts: { commit?: boolean; json?: boolean }, cmd: Command) => {
      const { layout } = cliContext(cmd);
      const [{ resolveAgent }, { mergeWork }, { printJson }] = await Promise.all([
        import('../../fleet/registry.js'),
        import('../../work/merge.js'),
        import('../output.js'),
      ]);
      const far = await farAgent(layout, prefix);
      const rec = far?.rec ?? resolveAgent(layout, prefix);
      const r = await mergeWork(layout, rec, { commit: opts.commit });
      if (!r.merged) process.exitCode = 1;
      // Its host's gc then knows the work is merged (§17.7).
      if (far && r.merged) {
        const note = await (await import('../../work/far-branch.js')).markMergedThere(layout, far.host, far.rec);
        if (note) process.stderr.write(`flotilla: ${note}\n`);
      }
      if (opts.json) return printJson(r);
      if (r.merged) {
        const what =
          r.how === 'up-to-date'
            ? `nothing to merge: ${r.into} already has ${r.branch}`
            : `merged ${r.branch} into ${r.into} (${r.how}), now at ${r.commit.slice(0, 12)}`;
        return void process.stdout.write(
          `${r.committedFirst ? `committed what ${r.id} left uncommitted; ` : ''}${what}\n`,
        );
      }
      process.stderr.write(
        `not merged: ${r.branch} conflicts with ${r.into} in ${r.conflicts.length} file${r.conflicts.length === 1 ? '' : 's'} — nothing was changed; resolve it yourself (git merge ${r.branch}) or ask ${r.id} to rebase on ${r.into}\n`,
      );
      for (const c of r.conflicts)
        process.stderr.write(`  ${c.path}${c.holders.length ? `  (leased by ${c.holders.join(', ')})` : ''}\n`);
    });
}

/**
 * An agent this host's registry does not know, run by another host of the fleet (§17.7):
 * its branch brought here from that host, and its record from the bus. Undefined when it is
 * this host's, or the bus is `maildir`.
 */
async function farAgent(
  layout: import('../../layout/layout.js').Layout,
  prefix: string,
): Promise<{ rec: import('../../fleet/record.js').AgentRecord; host: import('../../hosts/ssh.js').Host } | undefined> {
  const { cliConfig } = await import('../context.js');
  const { config } = await cliConfig(layout);
  if (config.fleet.bus === 'maildir') return undefined;
  const far = await (
    await import('../../hosts/elsewhere.js')
  ).agentsElsewhere(
    layout,
    config,
    [prefix],
    async () => (await import('../../bus/open.js')).busFor(layout, config).records,
  );
  if (!far) return undefined;
  const rec = far.records[0]!;
  await (await import('../../work/far-branch.js')).fetchFarBranch(layout, far.host, rec);
  return { rec, host: far.host };
}
