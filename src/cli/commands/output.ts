import { Command } from 'commander';
import { cliContext } from '../context.js';
import { printJson } from '../output.js';

/** `flotilla output <id>` (§2): a finished agent's final answer. */
export function command(): Command {
  return new Command('output')
    .description("print a finished agent's final answer (state/output/<id>.md)")
    .argument('<id>', 'agent id or unique prefix')
    .option('--json', 'print {id, output} as JSON')
    .action(async (id: string, opts: { json?: boolean }, cmd: Command) => {
      const { layout } = cliContext(cmd);
      const { agentOutput } = await import('../../outputs/output.js');
      const out = agentOutput(layout, id);
      if (opts.json) printJson({ id: out.id, output: out.text, path: layout.output(out.id) });
      else process.stdout.write(out.text.endsWith('\n') || out.text === '' ? out.text : out.text + '\n');
    });
}
