import { Command, Option } from 'commander';
import { cliConfig, cliContext } from '../context.js';
import { printJson } from '../output.js';

/**
 * `flotilla approve <request-id>` (§7, §11): allow a tool call an agent is waiting on, or
 * grant a secret: its value is read in this process and handed to the agent over a socket.
 */
export function command(): Command {
  return new Command('approve')
    .description('approve a pending approval or secret request (id or unique prefix, from flotilla inbox)')
    .argument('<request-id>', 'the request id shown in the approval_request / secret_request message')
    .option('--always', "approve this tool for the rest of that agent's life, not just this call")
    .addOption(new Option('--ttl <secs>', 'for a secret request: how many seconds the granted secret lives'))
    .option('--json', 'print the answered request as JSON')
    .action(async (requestId: string, opts: { always?: boolean; ttl?: string; json?: boolean }, cmd: Command) => {
      const { layout } = cliContext(cmd);
      const { config } = await cliConfig(layout);
      const { answerRequest } = await import('../../approvals/answer.js');
      if (opts.ttl !== undefined) {
        const { UsageError } = await import('../../errors.js');
        if (!/^\d+$/.test(opts.ttl))
          throw new UsageError(`--ttl takes whole seconds, got '${opts.ttl}' — e.g. --ttl 300`);
      }
      const ttlSecs = opts.ttl === undefined ? undefined : Number(opts.ttl);
      if (ttlSecs === 0) {
        const { UsageError } = await import('../../errors.js');
        throw new UsageError('--ttl must be at least 1 second');
      }
      const done = await answerRequest(
        layout,
        config,
        requestId,
        { decision: 'approve', scope: opts.always ? 'always' : 'once', ...(ttlSecs ? { ttlSecs } : {}) },
        { interactive: true },
      );
      if (opts.json) printJson(done);
      else if (done.key)
        process.stdout.write(
          `approved ${done.requestId}: ${done.agentId} holds secret '${done.key}'${done.expiresAt ? ` until ${done.expiresAt}` : ''} (the value went over the request's socket, never to a file)\n`,
        );
      else
        process.stdout.write(
          `approved ${done.requestId}: ${done.agentId} may run ${done.summary.replace(/^\S+ asks to run /, '')}${opts.always ? ` (and '${done.tool}' from now on)` : ''}\n`,
        );
    });
}
