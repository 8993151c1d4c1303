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
      let out;
      try {
        out = agentOutput(layout, id);
      } catch (err) {
        // An agent another host runs (§17.6): its answer is read there.
        const code = await outputElsewhere(layout, id, opts.json, err);
        process.exitCode = code;
        return;
      }
      if (opts.json) printJson({ id: out.id, output: out.text, path: layout.output(out.id) });
      else process.stdout.write(out.text.endsWith('\n') || out.text === '' ? out.text : out.text + '\n');
    });
}

/** `output` of an agent only another host runs: its answer printed from there; else `err` stands. */
async function outputElsewhere(
  layout: import('../../layout/layout.js').Layout,
  id: string,
  json: boolean | undefined,
  err: unknown,
): Promise<number> {
  const { FlotillaError } = await import('../../errors.js');
  if (!(err instanceof FlotillaError) || err.code !== 'not-found') throw err;
  const { cliConfig } = await import('../context.js');
  const { config } = await cliConfig(layout);
  const far = await (
    await import('../../hosts/elsewhere.js')
  ).agentsElsewhere(
    layout,
    config,
    [id],
    async () => (await import('../../bus/open.js')).busFor(layout, config).records,
  );
  if (!far) throw err;
  const { passThrough } = await import('../../hosts/pass-through.js');
  return passThrough(far.host, ['output', far.records[0]!.id, ...(json ? ['--json'] : [])]);
}
