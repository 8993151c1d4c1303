import { Command } from 'commander';
import { cliConfig, cliContext } from '../context.js';
import { traceMark } from '../../trace.js';

/**
 * `flotilla runtime-hook <event>` (internal): run by a vendor CLI's hooks (§13) with the
 * hook payload on stdin. Prints the CLI's own hook answer (continue with mail, add context,
 * refuse a tool, answer a permission question) and exits with the code it expects.
 */
export function command(): Command {
  return new Command('runtime-hook')
    .description('internal: called by a vendor CLI hook (Claude Code, Codex, Gemini CLI) of a fleet agent')
    .argument('<event>', 'turn-start | turn-end | pre-tool | permission')
    .action(async (event: string, _opts: unknown, cmd: Command) => {
      traceMark(`hook ${event}: command runs`);
      const { UsageError } = await import('../../errors.js');
      if (event !== 'turn-start' && event !== 'turn-end' && event !== 'pre-tool' && event !== 'permission')
        throw new UsageError(`unknown hook event '${event}' — use turn-start, turn-end, pre-tool or permission`);
      const { layout } = cliContext(cmd);
      const { config } = await cliConfig(layout);
      const chunks: Buffer[] = [];
      if (!process.stdin.isTTY) for await (const c of process.stdin) chunks.push(c as Buffer);
      const { runRuntimeHook } = await import('../../harness/cli-host/hook.js');
      const reply = await runRuntimeHook(layout, config, event, Buffer.concat(chunks).toString('utf8'));
      if (reply) {
        process.stdout.write(reply.stdout);
        process.exitCode = reply.exitCode;
      }
      traceMark(`hook ${event}: answered`);
    });
}
