import { Command, CommanderError } from 'commander';
import { runAtExit } from '../at-exit.js';
import { commandOf } from './from-spec.js';
import { COMMANDS, type CommandModule } from './registry.js';
import { reportError } from '../error-report.js';
import { firstCommandName } from './route.js';
import { VERSION } from '../versions.js';
import { GLOBAL_OPTIONS } from './spec.js';

/**
 * The whole CLI, through commander: every command, help and usage errors. main.ts loads it
 * for everything the fast path (fast.ts) does not take. Only the module of the command being
 * run is loaded (§14).
 */
export async function main(argv: string[]): Promise<number> {
  const program = new Command('flotilla')
    .description('Run a fleet of LLM agents as real processes in tmux')
    .version(VERSION, '-V, --version')
    .showSuggestionAfterError(true)
    .exitOverride()
    .configureOutput({ outputError: () => undefined });

  for (const o of GLOBAL_OPTIONS) program.option(o.flags, o.description);
  const args = argv.slice(2);
  const name = firstCommandName(args);
  const wanted = name && name in COMMANDS ? [name] : Object.keys(COMMANDS);
  // An alias maps to the same module: register each module once.
  const modules = [...new Set<CommandModule>(await Promise.all(wanted.map((n) => COMMANDS[n]!())))];
  for (const mod of modules) {
    const cmd = commandOf(mod);
    quiet(cmd);
    program.addCommand(cmd);
  }

  try {
    await program.parseAsync(argv);
    return typeof process.exitCode === 'number' ? process.exitCode : 0;
  } catch (err) {
    if (err instanceof CommanderError) return commanderExit(err);
    return reportError(err);
  } finally {
    await runAtExit();
  }
}

/** Which command's help a usage error should point to, by the error commander threw. */
const helpOf = new WeakMap<CommanderError, string>();

/** Commander must throw (so we choose exit codes and print one line) at every depth. */
function quiet(cmd: Command): void {
  const path = commandPath(cmd);
  cmd
    .exitOverride((err) => {
      helpOf.set(err, path);
      throw err;
    })
    .configureOutput({ outputError: () => undefined });
  for (const sub of cmd.commands) quiet(sub);
}

/** `flotilla agents show`: the words that reach this command. */
function commandPath(cmd: Command): string {
  const names: string[] = [];
  for (let c: Command | null = cmd; c; c = c.parent) names.unshift(c.name());
  return names[0] === 'flotilla' ? names.join(' ') : ['flotilla', ...names].join(' ');
}

function commanderExit(err: CommanderError): number {
  if (err.code === 'commander.helpDisplayed' || err.code === 'commander.version') return 0;
  // Help shown because a subcommand was missing: a usage error, and the help already said what to do.
  if (err.code === 'commander.help') return 2;
  // commander's messages are "error: unknown command 'x'\n(Did you mean y?)": fold to one line.
  const text = err.message
    .replace(/^error:\s*/i, '')
    .replace(/\s*\n\s*/g, ' ')
    .trim();
  // A subcommand's mistake is explained by that subcommand's help, not the list of commands.
  process.stderr.write(`flotilla: ${text} — run '${helpOf.get(err) ?? 'flotilla'} --help' for usage\n`);
  return 2;
}
