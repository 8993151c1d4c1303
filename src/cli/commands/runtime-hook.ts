import { cliConfig, contextOf, type Globals } from '../context.js';
import type { CommandSpec, Parsed } from '../spec.js';
import { traceMark } from '../../trace.js';
import type { FleetHookEvent } from '../../runtimes/types.js';

/**
 * `flotilla runtime-hook <event>` (internal): run by a vendor CLI's hooks (§13) with the
 * hook payload on stdin. Prints the CLI's own hook answer (continue with mail, add context,
 * refuse a tool, answer a permission question) and exits with the code it expects.
 *
 * `--warm`: started ahead by the agent's door (harness/door-send.ts) with its modules loaded
 * before anyone asks; stdin's first line is `{"event", "cwd"}` of the hook it is given, the
 * rest that hook's payload. It then does exactly what `runtime-hook <event>` would, once.
 *
 * A spare starts beside the vendor CLI's own start and again after each hook, so it runs on
 * the fast path (fast.ts: its own bundle through V8's code cache, no commander) (§14).
 */
export const spec: CommandSpec = {
  name: 'runtime-hook',
  fast: true,
  description: 'internal: called by a vendor CLI hook (Claude Code, Codex, Gemini CLI) of a fleet agent',
  args: [{ name: '[event]', description: 'session-start | turn-start | turn-end | pre-tool | permission' }],
  options: [
    { flags: '--warm', description: "internal: the door's spare; the event and cwd come as stdin's first line" },
  ],
};

export async function run(parsed: Parsed, globals: Globals): Promise<void> {
  const warm = parsed.opts.warm === true;
  const given = parsed.args[0] as string | undefined;
  if (!warm && !known(given)) throw await unknown(given);
  // The spare loads what every hook needs while it waits (the modules, not the config: that is read when asked).
  const hookModule = warm ? import('../../harness/cli-host/hook.js') : undefined;
  if (warm) await Promise.all([hookModule!.then((m) => m.preloadRuntimeHook()), import('../../config/cached.js')]);
  const chunks: Buffer[] = [];
  if (!process.stdin.isTTY) for await (const c of process.stdin) chunks.push(c as Buffer);
  let input = Buffer.concat(chunks).toString('utf8');
  let event = given;
  if (warm) {
    // No request: the door closed before handing this spare a hook (its harness ended).
    if (!input) return;
    const nl = input.indexOf('\n');
    const head = JSON.parse(nl === -1 ? input : input.slice(0, nl)) as { event?: string; cwd?: string };
    input = nl === -1 ? '' : input.slice(nl + 1);
    event = head.event;
    if (head.cwd) process.chdir(head.cwd);
  }
  if (!known(event)) throw await unknown(event);
  traceMark(`hook ${event}: command runs`);
  const { layout } = contextOf(globals);
  const { config } = await cliConfig(layout);
  const { runRuntimeHook } = await (hookModule ?? import('../../harness/cli-host/hook.js'));
  const reply = await runRuntimeHook(layout, config, event, input);
  if (reply) {
    process.stdout.write(reply.stdout);
    process.exitCode = reply.exitCode;
  }
  traceMark(`hook ${event}: answered`);
}

function known(e: string | undefined): e is FleetHookEvent {
  return ['session-start', 'turn-start', 'turn-end', 'pre-tool', 'permission'].includes(e ?? '');
}

async function unknown(e: string | undefined): Promise<Error> {
  const { UsageError } = await import('../../errors.js');
  return new UsageError(
    `unknown hook event '${e ?? ''}' — use session-start, turn-start, turn-end, pre-tool or permission`,
  );
}
