import { errorMessage } from '../errors.js';
import { canonicalToolName } from '../policy/tool-names.js';
import { hookEnv } from './env.js';
import { matchesTool } from './matcher.js';
import { runHookCommand, type HookCommandResult } from './run-command.js';
import type { DefinitionHooks, HookCommand, HookEvent, HookRunRecord, LifecycleHook } from './schema.js';

/** Who the hooks run for, and where their reports go. */
export interface HookContext {
  agentId: string;
  agentName: string;
  parentId?: string | null;
  cwd: string;
  /** Only `PATH` is taken from it (default `process.env`). */
  baseEnv?: NodeJS.ProcessEnv;
  /** Kills running hooks when the agent is cancelled. */
  signal?: AbortSignal;
  /** Every run, for the `hook_run` audit line. */
  onRun?: (record: HookRunRecord) => void;
  /** A failing hook that does not block; the harness logs it at WARN. */
  onWarn?: (message: string) => void;
}

export interface ToolCallInfo {
  name: string;
  input: unknown;
}

export type PreToolUseDecision = { allow: true } | { allow: false; reason: string };

/**
 * Runs the PreToolUse hooks matching a call, in order (§9). A `fail_closed` hook that fails
 * (non-zero exit, timeout, could not start) blocks the call with a reason the model can read;
 * any other failure is a warning and the call goes ahead.
 */
export async function runPreToolUse(
  hooks: Partial<DefinitionHooks> | undefined,
  call: ToolCallInfo,
  ctx: HookContext,
): Promise<PreToolUseDecision> {
  const tool = canonicalToolName(call.name);
  for (const hook of matching(hooks?.PreToolUse, call.name)) {
    const payload = { ...basePayload('PreToolUse', ctx), tool_name: tool, tool_input: call.input };
    const result = await runOne('PreToolUse', hook, payload, ctx, tool);
    const blocks = !succeeded(result) && hook.fail_closed;
    ctx.onRun?.(record('PreToolUse', hook, result, tool, blocks));
    if (succeeded(result)) continue;
    if (blocks) {
      return {
        allow: false,
        reason: `tool call blocked by a PreToolUse hook (\`${short(hook.command)}\`, ${failure(result, hook)})${detail(result)} — change the call so the hook accepts it, or do without it`,
      };
    }
    ctx.onWarn?.(
      `PreToolUse hook \`${short(hook.command)}\` ${failure(result, hook)}${detail(result)} — the '${tool}' call goes ahead (the hook is not fail_closed)`,
    );
  }
  return { allow: true };
}

/** Runs the PostToolUse hooks matching a finished call; failures are warnings. */
export async function runPostToolUse(
  hooks: Partial<DefinitionHooks> | undefined,
  call: ToolCallInfo & { output: string; isError: boolean },
  ctx: HookContext,
): Promise<void> {
  const tool = canonicalToolName(call.name);
  for (const hook of matching(hooks?.PostToolUse, call.name)) {
    const payload = {
      ...basePayload('PostToolUse', ctx),
      tool_name: tool,
      tool_input: call.input,
      tool_response: { output: call.output, is_error: call.isError },
    };
    const result = await runOne('PostToolUse', hook, payload, ctx, tool);
    ctx.onRun?.(record('PostToolUse', hook, result, tool));
    if (!succeeded(result))
      ctx.onWarn?.(
        `PostToolUse hook \`${short(hook.command)}\` ${failure(result, hook)}${detail(result)} — the agent goes on`,
      );
  }
}

/**
 * Runs the config-level `hooks.start` or `hooks.stop` commands in order; failures are
 * warnings. For stop hooks, go through `stopHookOnce` so they run once per agent.
 */
export async function runLifecycleHooks(
  event: 'start' | 'stop',
  commands: readonly LifecycleHook[],
  ctx: HookContext & { status?: string; exitReason?: string | null },
): Promise<void> {
  for (const cmd of commands) {
    const hook: HookCommand = {
      type: 'command',
      command: cmd.command,
      timeout_secs: cmd.timeout_secs,
      fail_closed: false,
    };
    const payload = {
      ...basePayload(event, ctx),
      ...(event === 'stop' ? { status: ctx.status ?? null, exit_reason: ctx.exitReason ?? null } : {}),
    };
    const result = await runOne(
      event,
      hook,
      payload,
      ctx,
      undefined,
      event === 'stop' ? (ctx.exitReason ?? null) : undefined,
    );
    ctx.onRun?.(record(event, hook, result));
    if (!succeeded(result))
      ctx.onWarn?.(
        `${event} hook \`${short(cmd.command)}\` ${failure(result, hook)}${detail(result)} — the agent goes on`,
      );
  }
}

function matching(groups: DefinitionHooks['PreToolUse'] | undefined, toolName: string): HookCommand[] {
  return (groups ?? []).filter((g) => matchesTool(g.matcher, toolName)).flatMap((g) => g.hooks);
}

function basePayload(event: HookEvent, ctx: HookContext): Record<string, unknown> {
  return {
    hook_event_name: event,
    agent_id: ctx.agentId,
    agent_name: ctx.agentName,
    parent_id: ctx.parentId ?? null,
    cwd: ctx.cwd,
  };
}

async function runOne(
  event: HookEvent,
  hook: HookCommand,
  payload: Record<string, unknown>,
  ctx: HookContext,
  toolName?: string,
  exitReason?: string | null,
): Promise<HookCommandResult> {
  let stdin: string;
  try {
    stdin = JSON.stringify(payload) + '\n';
  } catch (err) {
    // Tool input is JSON from the model, so this needs a cycle or a BigInt put there by code.
    stdin = JSON.stringify({ hook_event_name: event, error: `tool input is not JSON: ${errorMessage(err)}` }) + '\n';
  }
  const env = hookEnv(ctx.baseEnv ?? process.env, {
    agentId: ctx.agentId,
    agentName: ctx.agentName,
    parentId: ctx.parentId ?? null,
    ...(toolName === undefined ? {} : { toolName }),
    ...(exitReason === undefined ? {} : { exitReason }),
  });
  return runHookCommand({
    command: hook.command,
    timeoutSecs: hook.timeout_secs,
    env,
    stdin,
    cwd: ctx.cwd,
    ...(ctx.signal ? { signal: ctx.signal } : {}),
  });
}

function succeeded(r: HookCommandResult): boolean {
  return r.exitCode === 0 && !r.timedOut && r.error === undefined;
}

function record(
  event: HookEvent,
  hook: HookCommand,
  r: HookCommandResult,
  tool?: string,
  blocked?: boolean,
): HookRunRecord {
  return {
    hook: event,
    command: hook.command,
    exitCode: r.exitCode,
    signal: r.signal,
    durationMs: r.durationMs,
    timedOut: r.timedOut,
    ...(tool === undefined ? {} : { tool }),
    ...(blocked ? { blocked } : {}),
  };
}

/** `exit 1`, `timed out after 30s`, … */
function failure(r: HookCommandResult, hook: HookCommand): string {
  if (r.error !== undefined) return r.error;
  if (r.timedOut) return `timed out after ${hook.timeout_secs}s and was killed`;
  if (r.signal) return `was killed by ${r.signal}`;
  return `exit ${r.exitCode}`;
}

/** The first non-empty line of stderr (else stdout): usually the hook's own explanation. */
function detail(r: HookCommandResult): string {
  const line = [r.stderr, r.stdout]
    .flatMap((t) => t.split('\n'))
    .map((l) => l.trim())
    .find((l) => l.length > 0);
  return line ? `: ${line.length > 300 ? line.slice(0, 299) + '…' : line}` : '';
}

function short(command: string): string {
  const flat = command.replace(/\s+/g, ' ').trim();
  return flat.length > 80 ? flat.slice(0, 79) + '…' : flat;
}
