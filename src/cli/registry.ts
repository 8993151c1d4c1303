import type { Command } from 'commander';
import type { Globals } from './context.js';
import type { CommandSpec, Parsed } from './spec.js';

/**
 * A command file: builds its commander `Command`, or declares a spec and a `run` (fast.ts
 * runs it without commander when its spec says `fast`). Either way its action imports what it
 * needs lazily. A commander command with subcommands of its own on the fast path (`task`)
 * says `fast` here, and src/cli/fast/<name>.ts is the entry that parses them.
 */
export type CommandModule = { command(): Command; fast?: boolean } | SpecCommandModule;

export interface SpecCommandModule {
  spec: CommandSpec;
  run(parsed: Parsed, globals: Globals): Promise<void>;
}

/**
 * Every command, loaded on demand. Adding a command = one file in `commands/` + one line here.
 */
export const COMMANDS: Record<string, () => Promise<CommandModule>> = {
  agents: () => import('./commands/agents.js'),
  audit: () => import('./commands/audit.js'),
  config: () => import('./commands/config.js'),
  doctor: () => import('./commands/doctor.js'),
  run: () => import('./commands/run.js'),
  inbox: () => import('./commands/inbox.js'),
  send: () => import('./commands/send.js'),
  spawn: () => import('./commands/spawn.js'),
  wait: () => import('./commands/wait.js'),
  cancel: () => import('./commands/cancel.js'),
  reap: () => import('./commands/reap.js'),
  gc: () => import('./commands/gc.js'),
  attach: () => import('./commands/attach.js'),
  status: () => import('./commands/status.js'),
  // An alias: the status module registers `ls` itself; mapped here so `flotilla ls` loads only it.
  ls: () => import('./commands/status.js'),
  up: () => import('./commands/up.js'),
  watch: () => import('./commands/watch.js'),
  next: () => import('./commands/next.js'),
  resume: () => import('./commands/resume.js'),
  output: () => import('./commands/output.js'),
  diff: () => import('./commands/diff.js'),
  review: () => import('./commands/review.js'),
  merge: () => import('./commands/merge.js'),
  collect: () => import('./commands/collect.js'),
  transcript: () => import('./commands/transcript.js'),
  approve: () => import('./commands/approve.js'),
  deny: () => import('./commands/deny.js'),
  mcp: () => import('./commands/mcp.js'),
  task: () => import('./commands/task.js'),
  lease: () => import('./commands/lease.js'),
  schedule: () => import('./commands/schedule.js'),
  scheduler: () => import('./commands/scheduler.js'),
  trust: () => import('./commands/trust.js'),
  'runtime-hook': () => import('./commands/runtime-hook.js'),
};

/**
 * Which bundle main.ts runs for each name a person types, from the commands' `fast` flags:
 * a spec's name and aliases go to the bundle named for the spec. tools/build-cli.mjs calls
 * this at build time and writes the answer into main.js, which loads no command to route.
 */
export async function fastRoutes(
  commands: Record<string, () => Promise<CommandModule>> = COMMANDS,
): Promise<Record<string, string>> {
  const routes: Record<string, string> = {};
  for (const [name, load] of Object.entries(commands)) {
    const mod = await load();
    if ('spec' in mod) {
      if (mod.spec.fast) routes[name] = mod.spec.name;
    } else if (mod.fast) routes[name] = name;
  }
  return routes;
}
