import { Command } from 'commander';
import { cliContext, noFleetLine } from '../context.js';

export function command(): Command {
  return new Command('audit')
    .description('read the audit trail (state/audit.jsonl)')
    .option('--agent <id>', 'only events about this agent (id prefix)')
    .option('--event <name>', 'only this event (e.g. tool_call, spawn, message_sent)')
    .option('--schedule <name>', "only this schedule's events and what its runs did")
    .option('-f, --follow', 'keep printing new events as they are appended')
    .option('--json', 'print raw JSON lines')
    .action(async (opts: { agent?: string; event?: string; schedule?: string; follow?: boolean; json?: boolean }, cmd: Command) => {
      const { layout } = cliContext(cmd, { createState: false });
      const none = noFleetLine(layout);
      if (none) {
        // Nothing to read, and reading never makes a fleet root; following one that is not there would wait forever.
        if (opts.follow) {
          const { FlotillaError } = await import('../../errors.js');
          throw new FlotillaError(none, { code: 'no-fleet' });
        }
        process.stderr.write(`flotilla: ${none}\n`);
        return;
      }
      const { readAudit, followAudit, formatAuditLine } = await import('../../audit/read.js');
      const filter = { agent: opts.agent, event: opts.event, schedule: opts.schedule };
      const print = (line: Record<string, unknown>) =>
        process.stdout.write((opts.json ? JSON.stringify(line) : formatAuditLine(line)) + '\n');
      const read = readAudit(layout, filter);
      read.lines.forEach(print);
      if (opts.follow) await followAudit(layout, read, print);
    });
}
