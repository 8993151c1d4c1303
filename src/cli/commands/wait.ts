import { Command } from 'commander';
import { cliConfig, cliContext } from '../context.js';
import { statusWithReason } from '../../fleet/record-status.js';

/** `flotilla wait <id…>` (§2): block until those agents' tasks end; print their results. */
export function command(): Command {
  return new Command('wait')
    .description("block until those agents' tasks end and print their answers; exit 0 only if all completed")
    .argument('<ids...>', 'agent ids or unique prefixes')
    .option('--any', 'return when the first one ends')
    .option('--timeout <secs>', 'give up after this many seconds (exit 1; the agents keep running)')
    .option('--json', 'print the results as JSON')
    .action(async (ids: string[], opts: { any?: boolean; timeout?: string; json?: boolean }, cmd: Command) => {
      const { layout } = cliContext(cmd);
      const { config } = await cliConfig(layout);
      const [{ waitForAgents }, { UsageError }, { printJson }] = await Promise.all([
        import('../../lifecycle/wait.js'),
        import('../../errors.js'),
        import('../output.js'),
      ]);
      const timeout = opts.timeout === undefined ? undefined : Number(opts.timeout);
      if (timeout !== undefined && !(timeout >= 0))
        throw new UsageError(`--timeout must be a number of seconds ≥ 0, got '${opts.timeout}' — e.g. --timeout 600`);
      // Agents another host runs (§17.6): the wait runs there, its answers passed through.
      const far = await (
        await import('../../hosts/elsewhere.js')
      ).agentsElsewhere(
        layout,
        config,
        ids,
        async () => (await import('../../bus/open.js')).busFor(layout, config).records,
      );
      // Agents the fleet marked lost (§17.8) are answered here: their host is the one that cannot answer.
      if (far && far.records.every((r) => r.status === 'lost')) {
        const { lostResult } = await import('../../spawn/far-ops.js');
        const results = far.records.map(lostResult);
        if (opts.json) printJson({ results, pending: [] });
        else for (const r of results) process.stdout.write(`## ${r.id}: ${statusWithReason(r.status, r.exitReason)}\n`);
        process.exitCode = 1;
        return;
      }
      if (far) {
        const flags = [
          ...(opts.any ? ['--any'] : []),
          ...(opts.timeout !== undefined ? ['--timeout', String(timeout)] : []),
          ...(opts.json ? ['--json'] : []),
        ];
        const { passThrough } = await import('../../hosts/pass-through.js');
        process.exitCode = await passThrough(far.host, ['wait', ...far.records.map((r) => r.id), ...flags]);
        return;
      }
      const { approvalNotice } = await import('../../approvals/notice.js');
      const out = await waitForAgents(layout, config, ids, {
        any: opts.any,
        ...(timeout !== undefined ? { timeoutMs: timeout * 1000 } : {}),
        onApproval: (asking) => void approvalNotice(layout, asking).then((line) => process.stderr.write(line + '\n')),
      });
      const { commandReader, markHandedOn } = await import('../../lifecycle/handed-on.js');
      const reader = await commandReader(layout);
      if (reader) await markHandedOn(layout, reader, out.results);
      if (opts.json) printJson(out);
      else {
        for (const r of out.results) {
          process.stdout.write(`## ${r.id}: ${statusWithReason(r.status, r.exitReason)}\n`);
          if (r.output.trim()) process.stdout.write(r.output.endsWith('\n') ? r.output : r.output + '\n');
        }
        if (out.pending.length)
          process.stderr.write(`flotilla: still running after ${opts.timeout} s: ${out.pending.join(', ')}\n`);
      }
      const ok =
        (opts.any ? out.results.length > 0 : out.pending.length === 0) &&
        out.results.every((r) => r.status === 'completed');
      process.exitCode = ok ? 0 : 1;
    });
}
