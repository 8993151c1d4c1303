import type { Command } from 'commander';
import { execa } from 'execa';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { commandOf } from '../../src/cli/from-spec.js';
import { COMMANDS } from '../../src/cli/registry.js';
import { CLI } from '../helpers/cli.js';
import { tempDir } from '../helpers/fleet.js';

/**
 * The documented exit codes everywhere (§2: 0 ok, 1 refused or failed, 2 usage): every
 * command and subcommand of the registry is run, as a person would run it, with bad
 * arguments — an unknown option, a missing or an extra argument, a value that is not one of
 * the choices, an option without its value, a number that is not one — and each must exit 2
 * with one line on stderr that says what to do.
 */

interface Case {
  argv: string[];
  why: string;
}

/** `flotilla agents show`'s words and its commander command, for every command that runs. */
function walk(cmd: Command, path: string[], out: { path: string[]; cmd: Command }[]): void {
  const here = [...path, cmd.name()];
  if (cmd.commands.length === 0) out.push({ path: here, cmd });
  for (const sub of cmd.commands) walk(sub, here, out);
}

/** A number option of each command, with a value that is not a number. */
const NUMBERS: Record<string, string[]> = {
  gc: ['--older-than', 'soon'],
  wait: ['some-agent', '--timeout', 'soon'],
  approve: ['some-request', '--ttl', 'soon'],
  watch: ['--tick', 'soon'],
};

async function cases(): Promise<Case[]> {
  const out: Case[] = [];
  const seen = new Set<unknown>();
  const leaves: { path: string[]; cmd: Command }[] = [];
  for (const name of Object.keys(COMMANDS)) {
    const mod = await COMMANDS[name]!();
    if (seen.has(mod)) continue;
    seen.add(mod);
    const cmd = commandOf(mod);
    walk(cmd, [], leaves);
    if (cmd.commands.length > 0) out.push({ argv: [cmd.name(), 'no-such-subcommand'], why: 'an unknown subcommand' });
  }
  for (const { path, cmd } of leaves) {
    const args = cmd.registeredArguments;
    const filled = args.filter((a) => a.required).map(() => 'x');
    out.push({ argv: [...path, ...filled, '--no-such-option'], why: 'an unknown option' });
    if (args.some((a) => a.required)) out.push({ argv: [...path], why: 'a missing argument' });
    if (!args.some((a) => a.variadic))
      out.push({ argv: [...path, ...args.map(() => 'x'), 'one-too-many'], why: 'an extra argument' });
    for (const o of cmd.options) {
      if (o.argChoices)
        out.push({
          argv: [...path, ...filled, o.long!, 'not-a-choice'],
          why: `a value of ${o.long} that is not a choice`,
        });
      if (o.required) out.push({ argv: [...path, ...filled, o.long!], why: `${o.long} without its value` });
    }
    const number = NUMBERS[path.join(' ')];
    if (number) out.push({ argv: [...path, ...number], why: 'a number that is not one' });
  }
  // A spawn with no task is told how to give one, whatever else it asks for.
  out.push({ argv: ['spawn', '--wait'], why: 'a spawn with no task' });
  out.push({ argv: ['spawn', '--wait', '--json', ''], why: 'a spawn with an empty task' });
  return out;
}

let home: { dir: string; cleanup(): void };
beforeAll(() => {
  home = tempDir('flotilla-exit-');
});
afterAll(() => home.cleanup());

describe('exit codes and one-line errors', () => {
  it(
    'every command with bad arguments exits 2 with one line on stderr saying what to do',
    { timeout: 600_000 },
    async () => {
      const all = await cases();
      // Enough to cover every command: each leaf has at least the unknown option.
      expect(all.length).toBeGreaterThan(60);
      const env = {
        PATH: process.env.PATH ?? '/usr/bin:/bin',
        HOME: home.dir,
        XDG_CONFIG_HOME: join(home.dir, 'xdg'),
        FLOTILLA_ROOT: join(home.dir, 'proj', '.flotilla'),
        LANG: 'C.UTF-8',
      };
      mkdirSync(join(home.dir, 'proj'), { recursive: true });
      const failures: string[] = [];
      // A few at a time: each case is a fresh node process.
      const queue = [...all];
      const worker = async (): Promise<void> => {
        for (let c = queue.shift(); c; c = queue.shift()) {
          const r = await execa(process.execPath, [CLI, ...c.argv], {
            env,
            extendEnv: false,
            reject: false,
            cwd: join(home.dir, 'proj'),
            stdin: 'ignore',
            timeout: 60_000,
          });
          const lines = String(r.stderr)
            .split('\n')
            .filter((l) => l.trim() !== '');
          const problems = [
            r.exitCode !== 2 ? `exit ${r.exitCode}` : '',
            lines.length !== 1 ? `${lines.length} lines on stderr` : '',
            lines.length === 1 && !/^flotilla: \S.* — .*\S$/.test(lines[0]!)
              ? 'no "flotilla: what — what to do" line'
              : '',
          ].filter(Boolean);
          if (problems.length)
            failures.push(
              `flotilla ${c.argv.join(' ')} (${c.why}): ${problems.join(', ')}\n    ${lines.join('\n    ')}`,
            );
        }
      };
      await Promise.all([worker(), worker(), worker()]);
      expect(failures, failures.join('\n')).toEqual([]);
    },
  );
});
