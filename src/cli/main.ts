#!/usr/bin/env node
import { Command, CommanderError } from 'commander';
import { COMMANDS, type CommandModule } from './registry.js';
import { reportError } from './output.js';

/**
 * The `flotilla` executable. Only the module of the command being run is loaded, so a
 * call like `flotilla send` pays for commander and that one file (§14).
 */
export async function main(argv: string[]): Promise<number> {
  const program = new Command('flotilla')
    .description('Run a fleet of LLM agents as real processes in tmux')
    .version(VERSION, '-V, --version')
    .option('--root <dir>', 'fleet root (default: <git top-level>/.flotilla, or $FLOTILLA_ROOT)')
    .showSuggestionAfterError(true)
    .exitOverride()
    .configureOutput({ writeErr: () => undefined, outputError: () => undefined });

  const name = firstCommandName(argv.slice(2));
  const wanted = name && name in COMMANDS ? [name] : Object.keys(COMMANDS);
  const modules: CommandModule[] = await Promise.all(wanted.map((n) => COMMANDS[n]!()));
  for (const mod of modules) {
    const cmd = mod.command();
    cmd.exitOverride().configureOutput({ writeErr: () => undefined, outputError: () => undefined });
    program.addCommand(cmd);
  }

  try {
    await program.parseAsync(argv);
    return typeof process.exitCode === 'number' ? process.exitCode : 0;
  } catch (err) {
    if (err instanceof CommanderError) return commanderExit(err);
    return reportError(err);
  }
}

const VERSION = '0.1.0';

/** The first argument that is not an option (or an option's value) of the program itself. */
function firstCommandName(args: string[]): string | undefined {
  for (let i = 0; i < args.length; i++) {
    const a = args[i]!;
    if (a === '--root') { i++; continue; }
    if (a.startsWith('-')) continue;
    return a;
  }
  return undefined;
}

function commanderExit(err: CommanderError): number {
  if (err.code === 'commander.helpDisplayed' || err.code === 'commander.version' || err.code === 'commander.help') return 0;
  // commander's messages are "error: unknown command 'x'\n(Did you mean y?)": fold to one line.
  const text = err.message.replace(/^error:\s*/i, '').replace(/\s*\n\s*/g, ' ').trim();
  process.stderr.write(`flotilla: ${text} — run 'flotilla --help' for usage\n`);
  return 2;
}

main(process.argv).then(
  (code) => { process.exitCode = code; },
  (err: unknown) => { process.exitCode = reportError(err); },
);
