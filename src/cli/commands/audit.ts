import { Command } from 'commander';
import { cliContext, noFleetLine } from '../context.js';

interface AuditOpts {
  agent?: string;
  event?: string;
  schedule?: string;
  host?: string;
  follow?: boolean;
  json?: boolean;
}

export function command(): Command {
  return new Command('audit')
    .description("read the audit trail (state/audit.jsonl; on a nats:// bus every host's, merged by time)")
    .option('--agent <id>', 'only events about this agent (id prefix)')
    .option('--event <name>', 'only this event (e.g. tool_call, spawn, message_sent)')
    .option('--schedule <name>', "only this schedule's events and what its runs did")
    .option('--host <name>', 'only the lines host <name> wrote (its fleet.host setting)')
    .option('-f, --follow', 'keep printing new events as they are appended')
    .option('--json', 'print raw JSON lines (on a nats:// bus each with its host)')
    .action(async (opts: AuditOpts, cmd: Command) => {
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
      const [{ fleetConfig }, read] = await Promise.all([
        import('../../bus/settings.js'),
        import('../../audit/read.js'),
      ]);
      const config = await fleetConfig(layout);
      const filter = { agent: opts.agent, event: opts.event, schedule: opts.schedule };
      if (config.fleet.bus === 'maildir') {
        // One machine: its file is the whole log, read as it always was.
        const print = (line: Record<string, unknown>) =>
          process.stdout.write((opts.json ? JSON.stringify(line) : read.formatAuditLine(line)) + '\n');
        const mine = !opts.host || opts.host === (await import('../../hosts/self.js')).selfHost(config.fleet);
        const found = mine ? read.readAudit(layout, filter) : { lines: [], offset: 0, matches: () => false };
        found.lines.forEach(print);
        if (opts.follow) await read.followAudit(layout, found, print);
        return;
      }
      const { fleetAudit } = await import('../fleet-audit.js');
      await fleetAudit(layout, config, filter, opts);
    });
}
