import { hookEnv } from './env.js';
import { runHookCommand } from './run-command.js';
import type { HookContext } from './run-hooks.js';
import type { HookRunRecord, LifecycleHook, TeamHookEvent } from './schema.js';

/**
 * The team hooks (docs/hooks.md "Team hooks", §9, §15): config-level commands run where a
 * task is added (`TaskCreated`), before a task is marked done (`TaskCompleted`) and when a
 * persistent agent goes idle (`TeammateIdle`), with the same environment rules as every
 * hook (only PATH and FLOTILLA_* variables) plus `FLOTILLA_BOARD` and `FLOTILLA_TASK_ID`.
 * Exit 2 is the hook's answer, as in Claude Code: its stderr is feedback for the agent (a
 * refused completion, more work for an idle agent). Any other failure is a warning.
 */

export interface TeamHookRun {
  /** The stderr (else stdout) of the first hook that exited 2; later hooks do not run. */
  feedback: string | null;
}

export async function runTeamHooks(
  event: TeamHookEvent,
  commands: readonly LifecycleHook[],
  ctx: HookContext & { board?: string; taskId?: string },
  payload: Record<string, unknown>,
): Promise<TeamHookRun> {
  const stdin =
    JSON.stringify({
      hook_event_name: event,
      agent_id: ctx.agentId,
      agent_name: ctx.agentName,
      parent_id: ctx.parentId ?? null,
      cwd: ctx.cwd,
      ...payload,
    }) + '\n';
  const env = hookEnv(ctx.baseEnv ?? process.env, {
    agentId: ctx.agentId,
    agentName: ctx.agentName,
    parentId: ctx.parentId ?? null,
    ...(ctx.board === undefined ? {} : { board: ctx.board }),
    ...(ctx.taskId === undefined ? {} : { taskId: ctx.taskId }),
  });
  for (const cmd of commands) {
    const r = await runHookCommand({
      command: cmd.command,
      timeoutSecs: cmd.timeout_secs,
      env,
      stdin,
      cwd: ctx.cwd,
      ...(ctx.signal ? { signal: ctx.signal } : {}),
    });
    const answered = r.exitCode === 2 && !r.timedOut && r.error === undefined;
    const record: HookRunRecord = {
      hook: event,
      command: cmd.command,
      exitCode: r.exitCode,
      signal: r.signal,
      durationMs: r.durationMs,
      timedOut: r.timedOut,
      ...(answered ? { blocked: true } : {}),
      ...(ctx.board === undefined ? {} : { board: ctx.board }),
      ...(ctx.taskId === undefined ? {} : { task: ctx.taskId }),
    };
    ctx.onRun?.(record);
    if (answered)
      return {
        feedback:
          r.stderr.trim() ||
          r.stdout.trim() ||
          `the ${event} hook \`${short(cmd.command)}\` exited 2 without saying why`,
      };
    if (r.exitCode !== 0 || r.timedOut || r.error !== undefined) {
      const why =
        r.error ??
        (r.timedOut
          ? `timed out after ${cmd.timeout_secs}s and was killed`
          : r.signal
            ? `was killed by ${r.signal}`
            : `exit ${r.exitCode}`);
      ctx.onWarn?.(`${event} hook \`${short(cmd.command)}\` ${why} — going on (only exit 2 is an answer)`);
    }
  }
  return { feedback: null };
}

function short(command: string): string {
  const flat = command.replace(/\s+/g, ' ').trim();
  return flat.length > 80 ? flat.slice(0, 79) + '…' : flat;
}
