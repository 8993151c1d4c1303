import { Command } from 'commander';
import { cliConfig, cliContext } from '../context.js';
import { printJson } from '../output.js';

/** `flotilla deny <request-id>` (§7): refuse a tool call an agent is waiting on; the reason reaches its model. */
export function command(): Command {
  return new Command('deny')
    .description(
      "deny a pending approval or secret request, or revoke a live secret grant (id or unique prefix); the agent's model reads the reason",
    )
    .argument('<request-id>', 'the request id shown in the approval_request message')
    .option('--reason <text>', 'why, for the model to read (default: "denied by a person")')
    .option('--json', 'print the answered request as JSON')
    .action(async (requestId: string, opts: { reason?: string; json?: boolean }, cmd: Command) => {
      const { layout } = cliContext(cmd);
      const { config } = await cliConfig(layout);
      const { answerRequest } = await import('../../approvals/answer.js');
      const reason = opts.reason?.trim() || 'denied by a person';
      const done = await answerRequest(layout, config, requestId, { decision: 'deny', reason });
      if (opts.json) printJson({ ...done, reason });
      else if (done.revoked)
        process.stdout.write(`revoked ${done.requestId}: ${done.agentId} no longer holds secret '${done.key}'\n`);
      else process.stdout.write(`denied ${done.requestId} (${done.agentId}): ${reason}\n`);
    });
}
