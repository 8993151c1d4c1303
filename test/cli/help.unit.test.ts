import type { Command } from 'commander';
import { describe, expect, it } from 'vitest';
import { commandOf } from '../../src/cli/from-spec.js';
import { COMMANDS } from '../../src/cli/registry.js';

/** Every command and subcommand, built the way `flotilla` builds them. */
async function allCommands(): Promise<Command[]> {
  const found: Command[] = [];
  const walk = (cmd: Command) => {
    found.push(cmd);
    cmd.commands.forEach(walk);
  };
  for (const load of new Set(Object.values(COMMANDS))) walk(commandOf(await load()));
  return found;
}

describe('help texts', () => {
  it('say what a command does in words, never by a section number of the design', async () => {
    const commands = await allCommands();
    expect(commands.length).toBeGreaterThan(25);
    const cited = commands
      .map((cmd) => ({ name: cmd.name(), help: cmd.helpInformation() }))
      .filter(({ help }) => help.includes('§'))
      .map(
        ({ name, help }) =>
          `${name}: ${help
            .split('\n')
            .find((line) => line.includes('§'))!
            .trim()}`,
      );
    expect(cited).toEqual([]);
  });

  it('every command describes itself', async () => {
    const silent = (await allCommands()).filter((cmd) => !cmd.description().trim()).map((cmd) => cmd.name());
    expect(silent).toEqual([]);
  });
});
