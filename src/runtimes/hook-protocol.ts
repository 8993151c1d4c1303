import type { FleetHookEvent, HookReply, LaunchInput, Runtime } from './types.js';

/**
 * The hook protocol Claude Code defined and Codex follows: JSON on stdin with
 * `transcript_path`, `last_assistant_message` (turn end), `tool_name`/`tool_input` (pre-tool);
 * JSON on stdout with `decision: block` to continue a turn, `additionalContext` to add to
 * one, `continue: false` to stop one, `permissionDecision: deny` to refuse a tool (`ask` to have the CLI ask its
 * person). One copy, so both CLIs read the same answers.
 */
export type HookProtocol = Pick<
  Runtime,
  | 'continueWith'
  | 'addContext'
  | 'stopTurn'
  | 'turnPrompt'
  | 'denyTool'
  | 'askTool'
  | 'answerPermission'
  | 'finalAnswer'
  | 'transcriptPath'
  | 'toolCall'
>;

/** Claude's hook events for Flotilla's (Codex uses the same names). */
export const CLAUDE_HOOK_EVENTS = {
  'turn-start': 'UserPromptSubmit',
  'turn-end': 'Stop',
  'pre-tool': 'PreToolUse',
  permission: 'PermissionRequest',
} as const;

function reply(obj: unknown, exitCode = 0): HookReply {
  return { stdout: JSON.stringify(obj) + '\n', exitCode };
}

/**
 * The protocol for a CLI whose own tool names `canonicalOf` maps to Flotilla's (the tool table), and MCP tools
 * `mcpPrefix` + name.
 */
export function claudeStyleHooks(
  canonicalOf: (vendorName: string) => string | undefined,
  mcpPrefix: string,
  turnStartEvent = 'UserPromptSubmit',
): HookProtocol {
  return {
    continueWith: (text) => reply({ decision: 'block', reason: text }),
    addContext: (text) => reply({ hookSpecificOutput: { hookEventName: turnStartEvent, additionalContext: text } }),
    stopTurn: (reason) => reply({ continue: false, stopReason: reason }),
    turnPrompt: (p) => (typeof p.prompt === 'string' ? p.prompt : undefined),
    denyTool: (reason) =>
      reply({
        hookSpecificOutput: {
          hookEventName: 'PreToolUse',
          permissionDecision: 'deny',
          permissionDecisionReason: reason,
        },
      }),
    askTool: (reason) =>
      reply({
        hookSpecificOutput: {
          hookEventName: 'PreToolUse',
          permissionDecision: 'ask',
          permissionDecisionReason: reason,
        },
      }),
    answerPermission: (approved, reason) =>
      reply({
        hookSpecificOutput: {
          hookEventName: 'PermissionRequest',
          decision: approved ? { behavior: 'allow' } : { behavior: 'deny', message: reason },
        },
      }),
    finalAnswer: (p) => (typeof p.last_assistant_message === 'string' ? p.last_assistant_message : undefined),
    transcriptPath: (p) => (typeof p.transcript_path === 'string' ? p.transcript_path : undefined),
    toolCall(p) {
      const name = typeof p.tool_name === 'string' ? p.tool_name : undefined;
      if (!name) return undefined;
      const input = (p.tool_input ?? {}) as Record<string, unknown>;
      const canonical = canonicalOf(name) ?? (name.startsWith(mcpPrefix) ? name.slice(mcpPrefix.length) : name);
      const command =
        typeof input.command === 'string' ? input.command : typeof input.cmd === 'string' ? input.cmd : undefined;
      return { tool: canonical, ...(command !== undefined ? { command } : {}), input };
    },
  };
}

/**
 * The `hooks` settings block (Claude Code's shape, which Codex and Gemini CLI read too): each
 * Flotilla event runs `flotilla runtime-hook <event>` under the CLI's own event name; the
 * tool hooks match every tool (`toolMatcher`: Claude and Codex take `*`, Gemini a regex);
 * `timeout` in the CLI's unit (Claude and Codex: seconds, Gemini: milliseconds), 60 s — the
 * permission hook's is `permissionTimeout`: it waits for a person, and gives up on its own first.
 */
export function hookSettings(
  input: Pick<LaunchInput, 'hookCommand'>,
  events: Readonly<Partial<Record<FleetHookEvent, string>>>,
  opts: { toolMatcher?: string; timeout?: number; permissionTimeout?: number } = {},
): Record<string, unknown[]> {
  const out: Record<string, unknown[]> = {};
  for (const [event, vendor] of Object.entries(events) as [FleetHookEvent, string][]) {
    const timeout = event === 'permission' ? (opts.permissionTimeout ?? opts.timeout ?? 60) : (opts.timeout ?? 60);
    const hooks = [{ type: 'command', command: input.hookCommand(event), timeout }];
    out[vendor] = [
      event === 'pre-tool' || event === 'permission' ? { matcher: opts.toolMatcher ?? '*', hooks } : { hooks },
    ];
  }
  return out;
}

/**
 * The timeout, in seconds, of a permission hook that waits for the queue (Claude's): longer
 * than `agents.approval_timeout_secs`, so the hook itself ends an unanswered question (a
 * denial, withdrawn from the queue) rather than being killed by the CLI with the request left behind.
 */
export function permissionHookTimeout(input: Pick<LaunchInput, 'approvalTimeoutSecs'>): number {
  return Math.ceil(input.approvalTimeoutSecs) + 30;
}
