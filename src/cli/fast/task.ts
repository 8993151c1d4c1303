import { runAtExit } from '../../at-exit.js';
import { runSub, SUBCOMMANDS } from '../commands/task-ops.js';
import { reportError } from '../../error-report.js';
import { commandIndex } from '../route.js';
import { parseBySpec } from '../spec.js';

/**
 * `flotilla task <sub>` on the fast path: its own bundle, dist/cli/fast-task.js. The word
 * after `task` picks the subcommand's spec; anything not parsed without doubt (help, a
 * mistake, options before the subcommand) goes to the full CLI, as for every fast command.
 */
export function run(args: string[]): Promise<number> | null {
  const at = commandIndex(args);
  const sub = at === -1 ? undefined : args[at + 1];
  const spec = sub === undefined ? undefined : SUBCOMMANDS[sub];
  if (!spec || !sub) return null;
  const parsed = parseBySpec(
    spec,
    args.filter((_, i) => i !== at && i !== at + 1),
  );
  if (!parsed) return null;
  return runSub(sub, { args: parsed.args, opts: parsed.opts }, parsed.globals)
    .then(
      () => (typeof process.exitCode === 'number' ? process.exitCode : 0),
      (err: unknown) => reportError(err),
      // A board on the bus holds a connection open (bus/shared.ts): let go of it when done.
    )
    .finally(runAtExit);
}
