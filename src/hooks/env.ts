/** What a hook learns about the agent it runs for (§9). */
export interface HookEnvVars {
  agentId: string;
  agentName: string;
  /** Absent for a root agent: then FLOTILLA_PARENT_ID is not set. */
  parentId?: string | null;
  /** Tool hooks: the canonical tool id. */
  toolName?: string;
  /** Stop hooks: why the agent ended. */
  exitReason?: string | null;
  /** Task hooks: the board and the task. */
  board?: string;
  taskId?: string;
}

/** Used when the harness itself has no PATH, so `sh -c` can still find common commands. */
export const FALLBACK_PATH = '/usr/local/bin:/usr/bin:/bin';

/**
 * The whole environment of a hook: `PATH` from `base` plus the `FLOTILLA_*` variables, and
 * nothing else, so API keys and granted secrets in the harness's environment never reach a
 * hook command.
 */
export function hookEnv(base: NodeJS.ProcessEnv, vars: HookEnvVars): Record<string, string> {
  const env: Record<string, string> = {
    PATH: base.PATH || FALLBACK_PATH,
    FLOTILLA_AGENT_ID: vars.agentId,
    FLOTILLA_AGENT_NAME: vars.agentName,
  };
  if (vars.parentId) env.FLOTILLA_PARENT_ID = vars.parentId;
  if (vars.toolName !== undefined) env.FLOTILLA_TOOL_NAME = vars.toolName;
  if (vars.exitReason !== undefined) env.FLOTILLA_EXIT_REASON = vars.exitReason ?? '';
  if (vars.board !== undefined) env.FLOTILLA_BOARD = vars.board;
  if (vars.taskId !== undefined) env.FLOTILLA_TASK_ID = vars.taskId;
  return env;
}
