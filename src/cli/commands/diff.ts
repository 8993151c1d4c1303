import { Command } from 'commander';
import { cliContext } from '../context.js';

/** `flotilla diff <id>` (§12): what an agent changed. */
export function command(): Command {
  return new Command('diff')
    .description(
      "show an agent's work: its branch against the commit its worktree was made from, or an in-place agent's uncommitted changes",
    )
    .argument('<id>', 'agent id or unique prefix')
    .option('--stat', "git's --stat summary instead of the patch")
    .option('--json', 'print {id, kind, branch, from, files, untracked, uncommitted, text} as JSON')
    .action(async (prefix: string, opts: { stat?: boolean; json?: boolean }, cmd: Command) => {
      const { layout } = cliContext(cmd);
      const [{ resolveAgent }, { agentDiff }, { printJson }] = await Promise.all([
        import('../../fleet/registry.js'),
        import('../../work/diff.js'),
        import('../output.js'),
      ]);
      const d = await agentDiff(layout, resolveAgent(layout, prefix), { stat: opts.stat });
      if (opts.json) return printJson(d);
      process.stdout.write(d.text);
      if (d.kind === 'branch' && d.files.length === 0)
        process.stderr.write(`${d.id} has committed nothing on ${d.branch} since ${d.from.slice(0, 12)}\n`);
      if (d.uncommitted > 0)
        process.stderr.write(
          `${d.id} also has ${d.uncommitted} uncommitted file${d.uncommitted === 1 ? '' : 's'} in its worktree, not shown — flotilla merge ${d.id} --commit commits them\n`,
        );
      if (d.untracked.length > 0) process.stderr.write(`untracked, not shown: ${d.untracked.join(', ')}\n`);
    });
}
