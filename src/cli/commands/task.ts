import { Command } from 'commander';
import { commandFromSpec } from '../from-spec.js';
import { runSub, SUBCOMMANDS } from './task-ops.js';

/** On the fast path: src/cli/fast/task.ts picks the subcommand's spec (task-ops.ts) and parses it. */
export const fast = true;

/** The full CLI's `flotilla task`: the fast path's specs (task-ops.ts) as subcommands, for help and usage errors. */
export function command(): Command {
  const cmd = new Command('task').description(
    'a shared task board: add, claim, finish and wait for tasks (agents working as a team)',
  );
  for (const [name, spec] of Object.entries(SUBCOMMANDS)) {
    cmd.addCommand(commandFromSpec(spec, (parsed, self) => runSub(name, parsed, self.optsWithGlobals())));
  }
  return cmd;
}
