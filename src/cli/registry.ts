import type { Command } from 'commander';
import type { Globals } from './context.js';
import type { CommandSpec, Parsed } from './spec.js';

/**
 * A command file: builds its commander `Command`, or declares a spec and a `run` (the
 * commands on the fast path, fast.ts). Either way its action imports what it needs lazily.
 */
export type CommandModule = { command(): Command } | SpecCommandModule;

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
