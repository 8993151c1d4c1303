import { z } from 'zod';

/**
 * Hooks in an agent definition (§9), Claude Code's shape:
 * `{PreToolUse: [{matcher: "Edit|Write", hooks: [{type: command, command, timeout_secs, fail_closed}]}]}`.
 */
export const hookCommandSchema = z.object({
  type: z.literal('command').default('command'),
  command: z.string().min(1).describe('Shell command run with sh -c; the tool call arrives as JSON on stdin'),
  timeout_secs: z
    .number()
    .positive()
    .default(30)
    .describe('Kill the hook and its process group after this many seconds'),
  fail_closed: z.boolean().default(false).describe('PreToolUse only: a failing hook blocks the tool call'),
});
export type HookCommand = z.infer<typeof hookCommandSchema>;

export const hookMatcherSchema = z.object({
  matcher: z
    .string()
    .default('')
    .describe("'|'-separated substrings of the tool name; empty or '*' matches every tool"),
  hooks: z.array(hookCommandSchema).min(1),
});
export type HookMatcher = z.infer<typeof hookMatcherSchema>;

export const definitionHooksSchema = z.object({
  PreToolUse: z.array(hookMatcherSchema).default([]),
  PostToolUse: z.array(hookMatcherSchema).default([]),
});
export type DefinitionHooks = z.infer<typeof definitionHooksSchema>;

/** A config-level lifecycle hook (`hooks.start` / `hooks.stop`). */
export interface LifecycleHook {
  command: string;
  timeout_secs: number;
}

/** Team hooks (§9, §15) run where a task changes or an agent goes idle; named as in Claude Code. */
export type TeamHookEvent = 'TaskCreated' | 'TaskCompleted' | 'TeammateIdle';

export type HookEvent = 'PreToolUse' | 'PostToolUse' | 'start' | 'stop' | TeamHookEvent;

/** One hook run, for the `hook_run` audit line. */
export interface HookRunRecord {
  hook: HookEvent;
  command: string;
  exitCode: number | null;
  signal: NodeJS.Signals | null;
  durationMs: number;
  timedOut: boolean;
  /** The tool the hook ran for (tool hooks). */
  tool?: string;
  /**
   * True when this run blocked the tool call (fail_closed PreToolUse) or refused a completion (TaskCompleted, exit 2).
   */
  blocked?: boolean;
  /** Task hooks: the board and task. */
  board?: string;
  task?: string;
}
