import { Command } from 'commander';
import { cliConfig, cliContext } from '../context.js';
import { printJson } from '../output.js';

export function command(): Command {
  return new Command('doctor')
    .description(
      'check node, tmux, inotify limits, the fleet root and what the kernel enforces (lineage, sandbox); each failure says how to fix it',
    )
    .option('--json', 'print the checks as JSON')
    .option(
      '--host <name>',
      'check a configured remote host instead: ssh reaches it without a prompt, and Flotilla, Node and tmux there',
    )
    .option(
      '--runtimes',
      'instead, start each vendor CLI found in every permission mode against a local stand-in for its API and report which modes reach the model (under a minute)',
    )
    .action(async (opts: { json?: boolean; host?: string; runtimes?: boolean }, cmd: Command) => {
      const { layout } = cliContext(cmd, { createState: false });
      const checks = opts.runtimes
        ? await (await import('./doctor-runtimes.js')).probeRuntimes()
        : opts.host
          ? await (await import('../../hosts/remote-doctor.js')).hostChecks((await cliConfig(layout)).config, opts.host)
          : await (await import('./doctor-checks.js')).runChecks(layout);
      if (opts.json) printJson(checks);
      else
        for (const c of checks)
          process.stdout.write(
            `${!c.ok ? 'FAIL' : c.warn ? 'WARN' : 'ok  '}  ${c.name}: ${c.detail}${(c.ok && !c.warn) || !c.fix ? '' : ` — ${c.fix}`}\n`,
          );
      if (checks.some((c) => !c.ok)) process.exitCode = 1;
    });
}
