import { Command, CommanderError } from 'commander';
import { existsSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import * as mcp from '../../src/cli/commands/mcp.js';
import * as review from '../../src/cli/commands/review.js';
import * as run from '../../src/cli/commands/run.js';
import * as runtimeHook from '../../src/cli/commands/runtime-hook.js';
import * as send from '../../src/cli/commands/send.js';
import * as spawn from '../../src/cli/commands/spawn.js';
import * as status from '../../src/cli/commands/status.js';
import * as watch from '../../src/cli/commands/watch.js';
import { commandFromSpec } from '../../src/cli/from-spec.js';
import { fastRoutes, type SpecCommandModule } from '../../src/cli/registry.js';
import { commandIndex } from '../../src/cli/route.js';
import { GLOBAL_OPTIONS, parseBySpec, type Parsed } from '../../src/cli/spec.js';

/**
 * The fast path (fast.ts) parses `send` and `status` without commander. It must take a command
 * line exactly as commander would, and leave every line commander would refuse (or answer
 * with help) to commander.
 */

type Outcome = { ok: true; parsed: Parsed; root: string | undefined } | { ok: false; code: string };

/** What the full CLI makes of `args` (the words after `flotilla`). */
async function byCommander(mod: SpecCommandModule, args: string[]): Promise<Outcome> {
  let got: Outcome | undefined;
  const program = new Command('flotilla')
    .exitOverride()
    .configureOutput({ writeOut: () => undefined, writeErr: () => undefined });
  for (const o of GLOBAL_OPTIONS) program.option(o.flags, o.description);
  const cmd = commandFromSpec(mod.spec, async (parsed, self) => {
    got = { ok: true, parsed, root: self.optsWithGlobals<{ root?: string }>().root };
  });
  cmd.exitOverride().configureOutput({ writeOut: () => undefined, writeErr: () => undefined });
  program.addCommand(cmd);
  try {
    await program.parseAsync(args, { from: 'user' });
  } catch (err) {
    if (err instanceof CommanderError) return { ok: false, code: err.code };
    throw err;
  }
  return got!;
}

/** What the fast path makes of them: null means "hand it to commander". */
function byFastPath(mod: SpecCommandModule, args: string[]): Outcome | null {
  const at = commandIndex(args);
  const r = parseBySpec(
    mod.spec,
    args.filter((_, i) => i !== at),
  );
  return r && { ok: true, parsed: { args: r.args, opts: r.opts }, root: r.globals.root };
}

const taken: [SpecCommandModule, string[]][] = [
  [send, ['send', 'bob', 'hello']],
  [send, ['send', 'bob', 'hello', 'there', 'world']],
  [send, ['send', 'bob']],
  [send, ['send', 'bob', 'hi', '--priority', 'high']],
  [send, ['send', '--priority=urgent', 'bob', 'hi']],
  [send, ['send', 'bob', '--summary', 'short', 'long text']],
  [send, ['send', 'bob', '--summary=', 'x']],
  [send, ['send', 'bob', '--summary=a=b', 'x']],
  [send, ['send', '--json', 'bob', 'hi']],
  [send, ['send', 'bob', 'hi', '--json']],
  [send, ['send', 'bob', '--reply-to', 'm-1', '--kind', 'system', 'x']],
  [send, ['send', 'bob', '--', '--not-an-option', '-x']],
  [send, ['--root', '/r', 'send', 'bob', 'hi']],
  [send, ['--root=/r', 'send', 'bob', 'hi']],
  [send, ['send', 'bob', 'hi', '--root', '/r']],
  [send, ['--root', 'send', 'send', 'bob', 'hi']],
  [send, ['send', 'bob', 'hi', '--priority', 'low', '--priority', 'high']],
  [send, ['send', '--to', 'tree', 'stop', 'and', 'commit']],
  [send, ['send', '--to=board:api']],
  [status, ['status']],
  [status, ['ls', '--json']],
  [status, ['status', '--all', '--json']],
  [status, ['status', '--root', '/x']],
  [watch, ['watch']],
  [watch, ['--root', '/x', 'watch', '--tick', '0.5']],
  [spawn, ['spawn', 'fix', 'the', 'bug']],
  [spawn, ['spawn', '--wait', '--agent', 'lead', '--id', 'lead-root', 'split the work', '--json']],
  [spawn, ['spawn', '--oneshot', '--context', 'summary', '--runtime', 'claude', '--auto-claim', '--board=api']],
  [spawn, ['spawn', '--background', '--queue', '--worktree', '--cwd', '/w', '--', '--literally', '-x']],
  [spawn, ['spawn', '--lineage', '{"a":1}', '--host', 'local', '--prompt', 'p']],
  [run, ['run', '--spawned', 'worker-ab12']],
  [run, ['--root', '/r', 'run', '--oneshot', '--model', 'script:/s.yaml', 'hello', 'there']],
  [run, ['run', '--agent', 'x', '--id', 'y', '--context', 'last_turn', '--prompt', 'p']],
  [runtimeHook, ['runtime-hook', 'turn-start']],
  [runtimeHook, ['--root', '/r', 'runtime-hook', 'pre-tool']],
  [mcp, ['mcp']],
  [mcp, ['--root', '/f', 'mcp']],
];

const refused: [SpecCommandModule, string[]][] = [
  [send, ['send', 'bob', 'hi', '--priority', 'bogus']],
  [send, ['send', '--bogus', 'bob']],
  [send, ['send', 'bob', '--help']],
  [send, ['send', '-h']],
  [send, ['send', '--to']],
  [send, ['send', 'bob', '--summary']],
  [send, ['send', 'bob', '--json=yes']],
  [send, ['send', 'bob', '-x']],
  [send, ['send', '--no-json', 'bob', 'x']],
  [status, ['status', 'extra']],
  [status, ['status', '--jsn']],
  [status, ['status', '--help']],
  [watch, ['watch', '--tick']],
  [watch, ['watch', 'now']],
  [spawn, ['spawn', '--runtime', 'bogus', 'x']],
  [spawn, ['spawn', '-h']],
  [spawn, ['spawn', '--wait=1', 'x']],
  [spawn, ['spawn', '--prompt']],
  [run, ['run', '--context', 'everything']],
  [run, ['run', '--help']],
  [run, ['run', '--spawned']],
  [runtimeHook, ['runtime-hook', 'turn-start', 'extra']],
  [runtimeHook, ['runtime-hook', '--warm']],
  [runtimeHook, ['runtime-hook']],
  [mcp, ['mcp', 'extra']],
  [mcp, ['mcp', '--help']],
];

describe('the fast path parses like commander', () => {
  it.each(taken)('takes %#: the same arguments, options and --root as commander', async (mod, args) => {
    const fast = byFastPath(mod, args);
    expect(fast, `fast path refused ${args.join(' ')}`).not.toBeNull();
    expect(fast).toEqual(await byCommander(mod, args));
  });

  it.each(refused)('leaves %# to commander, which refuses it or shows help', async (mod, args) => {
    expect(byFastPath(mod, args)).toBeNull();
    const full = await byCommander(mod, args);
    expect(full.ok).toBe(false);
  });

  it('gives the defaults commander gives, and camel-cases options as commander does', () => {
    expect(byFastPath(send, ['send', 'bob', 'hi', '--reply-to', 'm-1'])).toEqual({
      ok: true,
      root: undefined,
      parsed: { args: ['bob', ['hi']], opts: { priority: 'normal', kind: 'message', replyTo: 'm-1' } },
    });
  });

  it('routes each command its spec flags fast, by name and alias, to the bundle named for it', async () => {
    const routes = await fastRoutes();
    const byName: Record<string, string> = {};
    for (const mod of [send, status, watch, review, spawn, run, runtimeHook, mcp]) {
      expect(mod.spec.fast, mod.spec.name).toBe(true);
      for (const name of [mod.spec.name, ...(mod.spec.aliases ?? [])]) byName[name] = mod.spec.name;
    }
    // `task` picks one spec per subcommand, in its own entry (fast/task.ts).
    byName.task = 'task';
    expect(routes).toEqual(byName);
    expect(existsSync(new URL('../../src/cli/fast/task.ts', import.meta.url))).toBe(true);
    // `next` has a spec but runs in the full CLI: no flag, no route.
    expect(routes.next).toBeUndefined();
  });
});
