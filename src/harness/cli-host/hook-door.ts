import type { Config } from '../../config/schema.js';
import { errorMessage } from '../../errors.js';
import { readRecord } from '../../fleet/registry.js';
import type { DoorRunResult } from '../../inbox/door.js';
import type { Layout } from '../../layout/layout.js';
import { traceMark } from '../../trace.js';

/** The hooks the shim answers itself: those on the path of every turn (a task's start, its end, mail). */
const IN_SHIM = new Set(['turn-start', 'turn-end']);

/**
 * Answers the CLI's turn hooks in the shim when they come through the agent's door (§13),
 * instead of starting `flotilla runtime-hook` on the host for each: a node start, the whole CLI
 * and a config read on the path of every task and every mail. The answer is the same
 * `runRuntimeHook`'s, for the shim's own agent (the one the hook process's ancestry names),
 * with the CLI's environment and the config the shim runs on, as a harness agent's hooks
 * read theirs. `pre-tool` and `permission` still run as their own process: the shell gate's
 * parser would stay in the shim's memory, and a permission question waits for as long as the
 * CLI's hook may.
 */
export function answerTurnHooks(
  layout: Layout,
  config: Config,
  id: string,
): (args: readonly string[], stdin: string, env: NodeJS.ProcessEnv) => Promise<DoorRunResult> | null {
  return (args, stdin, env) => {
    const event = args[1];
    if (args.length !== 2 || args[0] !== 'runtime-hook' || !event || !IN_SHIM.has(event)) return null;
    return answer(layout, config, id, event as 'turn-start' | 'turn-end', stdin, env);
  };
}

async function answer(
  layout: Layout,
  config: Config,
  id: string,
  event: 'turn-start' | 'turn-end',
  stdin: string,
  env: NodeJS.ProcessEnv,
): Promise<DoorRunResult> {
  traceMark(`shim: ${event} hook asked`);
  try {
    const { runRuntimeHook } = await import('./hook.js');
    const reply = await runRuntimeHook(layout, config, event, stdin, { self: readRecord(layout, id), env });
    traceMark(`shim: ${event} hook answered`);
    return { stdout: reply?.stdout ?? '', stderr: '', exitCode: reply?.exitCode ?? 0 };
  } catch (err) {
    return { stdout: '', stderr: `flotilla: ${errorMessage(err)}\n`, exitCode: 1 };
  }
}
