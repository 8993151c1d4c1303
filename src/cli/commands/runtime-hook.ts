import { cliConfig, contextOf, type Globals } from '../context.js';
import type { CommandSpec, Parsed } from '../spec.js';
import { traceMark } from '../../trace.js';
import type { FleetHookEvent } from '../../runtimes/types.js';

/**
 * `flotilla runtime-hook <event>` (internal): run by a vendor CLI's hooks (§13) with the
 * hook payload on stdin. Prints the CLI's own hook answer (continue with mail, add context,
 * refuse a tool, answer a permission question) and exits with the code it expects.
 *
 * A sandboxed CLI's hooks go through the agent's door instead (tools/door-hook), where the shim
 * answers them in its own process (harness/door-send.ts); this command is what runs them
 * elsewhere, and a `permission` hook, which waits for a person, everywhere. It runs on the fast
 * path (fast.ts: its own bundle through V8's code cache, no commander) (§14).
 */
export const spec: CommandSpec = {
  name: 'runtime-hook',
  fast: true,
  description: 'internal: called by a vendor CLI hook (Claude Code, Codex, Gemini CLI) of a fleet agent',
  args: [{ name: '<event>', description: 'session-start | turn-start | turn-end | pre-tool | permission' }],
  options: [],
};

export async function run(parsed: Parsed, globals: Globals): Promise<void> {
  const event = parsed.args[0] as string | undefined;
  const hooks = await import('../../harness/cli-host/hook.js');
  const refused = hooks.hookEventRefusal(event);
  if (refused) {
    const { UsageError } = await import('../../errors.js');
    throw new UsageError(refused);
  }
  const chunks: Buffer[] = [];
  if (!process.stdin.isTTY) for await (const c of process.stdin) chunks.push(c as Buffer);
  traceMark(`hook ${event}: command runs`);
  const { layout } = contextOf(globals);
  const { config } = await cliConfig(layout);
  const reply = await hooks.runRuntimeHook(
    layout,
    config,
    event as FleetHookEvent,
    Buffer.concat(chunks).toString('utf8'),
  );
  if (reply) {
    process.stdout.write(reply.stdout);
    process.exitCode = reply.exitCode;
  }
  traceMark(`hook ${event}: answered`);
}
