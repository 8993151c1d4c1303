import { dirname, join } from 'node:path';
import { loginFile } from './login.js';
import {
  canonicalOfVendorTool,
  MCP_FLEET_TOOLS,
  TOOL_TABLE,
  vendorPrimaryNames,
  vendorToolNames,
} from '../policy/tool-table.js';
import { CLAUDE_HOOK_EVENTS, claudeStyleHooks, hookSettings, permissionHookTimeout } from './hook-protocol.js';
import { claudeSessionId, claudeSessionTurns } from './claude-session.js';
import { usageByMessage, wakeNotice } from './session-file.js';
import type { Launch, LaunchInput, PolicyInput, Runtime, SessionLine } from './types.js';

/**
 * Claude Code (`@anthropic-ai/claude-code`). Its config folder is CLAUDE_CONFIG_DIR (a
 * per-agent one: the person's ~/.claude is never read for settings nor written); settings
 * come from `settings.json` there (hooks, permissions), the fleet tools from
 * `--mcp-config` with `--strict-mcp-config`, MCP tools are named `mcp__flotilla__<tool>`.
 */
const MCP_PREFIX = 'mcp__flotilla__';
/** Claude's own tools with no Flotilla equivalent: sub-agents, the web, notebooks, background shells. */
const EXTRA = ['Task', 'Agent', 'WebFetch', 'WebSearch', 'NotebookEdit'];

export interface ClaudePermissions {
  defaultMode: 'plan' | 'default' | 'acceptEdits' | 'dontAsk';
  allow: string[];
  deny: string[];
}

/**
 * The policy as Claude's own permission settings. Claude's `dontAsk` *denies* whatever is
 * not pre-approved, so Flotilla's `dont_ask` becomes `dontAsk` plus an allow rule for each
 * permitted tool; every tool the policy withholds is a deny rule (deny wins in every mode,
 * bypassPermissions included). Fleet tools never ask, as in the harness.
 */
export function compileClaudePolicy(policy: PolicyInput): ClaudePermissions {
  const allowed = new Set(policy.tools);
  // The tool table (policy/tool-table.ts) names Claude's own tools for each canonical one; the fleet tools are MCP
  // tools.
  const names = (t: string): readonly string[] =>
    MCP_FLEET_TOOLS.includes(t) ? [MCP_PREFIX + t] : vendorToolNames('claude', t);
  const tools = TOOL_TABLE.map((r) => r.name as string);
  const deny = [...tools.filter((t) => !allowed.has(t)).flatMap(names), ...EXTRA];
  const fleetAllowed = MCP_FLEET_TOOLS.filter((t) => allowed.has(t)).flatMap(names);
  const all = tools.filter((t) => allowed.has(t)).flatMap(names);
  const reads = TOOL_TABLE.filter((r) => r.class === 'read' && !r.mcp && allowed.has(r.name)).flatMap((r) =>
    names(r.name),
  );
  switch (policy.permissionMode) {
    case 'plan':
      return { defaultMode: 'plan', allow: [], deny };
    case 'default':
      return { defaultMode: 'default', allow: [...reads, ...fleetAllowed], deny };
    case 'accept_edits':
      return { defaultMode: 'acceptEdits', allow: fleetAllowed, deny };
    case 'dont_ask':
      return { defaultMode: 'dontAsk', allow: all, deny };
    // Reached only when agents.allow_bypass_permissions let the definition load. Claude's own
    // bypassPermissions exits at start for root (and asks a person to accept it once): the
    // same outcome — nothing asks, withheld tools stay denied — is dontAsk with every tool allowed.
    case 'bypass_permissions':
      return { defaultMode: 'dontAsk', allow: all, deny };
  }
}

export const claude: Runtime = {
  name: 'claude',
  title: 'Claude Code',
  npmPackage: '@anthropic-ai/claude-code',
  binary: 'claude',
  binEnv: 'FLOTILLA_CLAUDE_BIN',
  // SessionStart: held until the fleet tools are listed (firstTurnWaitsForMcp).
  hookEvents: { ...CLAUDE_HOOK_EVENTS, 'session-start': 'SessionStart' },
  mcpToolPrefix: MCP_PREFIX,
  toolNames: vendorPrimaryNames('claude'),
  extraTools: EXTRA,
  // Claude 2.1.197 starts a command-line task's turn before its MCP servers are connected, MCP_CONNECTION_NONBLOCKING
  // or not (that waits in --print mode only), but only once its SessionStart hooks have answered. A server's listed
  // tools land in its state (a 16 ms batch timer, set as it reads the tools/list answer) before it answers the ping
  // after it, and the request's tools are taken after its UserPromptSubmit hook: answered once the ping is, 20 of 20
  // first requests offered the fleet tools (12 quiet, 8 at load 4). The turn's attachments (the server's instructions)
  // are taken as it takes the task, and may still be missing then: who the agent is comes in the SessionStart hook's
  // own context (sessionContext). A resumed session's task is typed instead (cli-host/cli-tend.ts).
  firstTurnWaitsForMcp: true,
  sessionContext: (text) => ({
    stdout: `${JSON.stringify({ hookSpecificOutput: { hookEventName: 'SessionStart', additionalContext: text } })}\n`,
    exitCode: 0,
  }),
  inputPrompt: ['❯'],
  compilePolicy: compileClaudePolicy,

  launch(input: LaunchInput, policy: PolicyInput): Launch {
    const permissions = compileClaudePolicy(policy);
    const settings = {
      permissions,
      hooks: hookSettings(input, claude.hookEvents, { permissionTimeout: permissionHookTimeout(input) }),
      // Nothing leaves the machine but the model calls themselves.
      env: QUIET_ENV,
      includeCoAuthoredBy: false,
      // A trusted folder's .mcp.json would open "New MCP server found in this project" at start
      // (--strict-mcp-config or not) and the agent would wait there; approved here, the servers
      // are still never started: --strict-mcp-config runs only the fleet's (test/runtimes/folder-trust.test.ts).
      ...(input.trusted ? { enableAllProjectMcpServers: true } : {}),
    };
    const state = firstRunAnswers(input);
    // alwaysLoad: the fleet tools are offered from the first request, not deferred behind a tool search.
    const mcp = {
      mcpServers: { flotilla: { type: 'stdio', command: input.mcp.command, args: input.mcp.args, alwaysLoad: true } },
    };
    const argv = [
      '--mcp-config',
      join(input.configDir, 'mcp.json'),
      '--strict-mcp-config',
      '--settings',
      join(input.configDir, 'settings.json'),
      '--permission-mode',
      permissions.defaultMode,
      // An untrusted folder's .claude/settings.json and settings.local.json (hooks, apiKeyHelper,
      // permissions, env) are not read; the fleet's own settings come in with --settings.
      ...(input.trusted ? [] : ['--setting-sources', 'user']),
      ...(input.model ? ['--model', input.model] : []),
      // `flotilla resume`: Claude continues the session in its own file, in this agent's folder.
      ...(input.resume ? ['--resume', input.resume] : []),
      ...(input.prompt.trim() ? ['--', input.prompt] : []),
    ];
    return {
      argv,
      env: {
        CLAUDE_CONFIG_DIR: input.configDir,
        ...QUIET_ENV,
        // Claude's own switch past its trust dialog (it would wait for a person) without recording
        // the folder as trusted: nothing of the folder's is loaded (--setting-sources user, --strict-mcp-config).
        ...(input.trusted ? {} : { CLAUDE_CODE_SANDBOXED: '1' }),
        // Claude retries every failed request ten times (a refused key too: minutes at an error
        // in its pane); the fleet's own count applies unless the spawner set one.
        CLAUDE_CODE_MAX_RETRIES: input.env.CLAUDE_CODE_MAX_RETRIES?.trim() || String(input.maxRetries),
        // A shared login by reference: Claude keeps its login ("secure storage": the credentials
        // file, or the keychain on macOS) in this folder instead of CLAUDE_CONFIG_DIR; empty
        // means the default ~/.claude and the default keychain entry. A refresh lands there too
        // (in the sandbox, in the shim's copy's folder, which the shim writes back).
        ...(input.loginFile
          ? {
              CLAUDE_SECURESTORAGE_CONFIG_DIR:
                input.loginFile === loginFile('claude', input.env)
                  ? (input.env.CLAUDE_CONFIG_DIR?.trim() ?? '')
                  : dirname(input.loginFile),
            }
          : {}),
      },
      files: [
        { path: 'settings.json', content: JSON.stringify(settings, null, 2) },
        { path: '.claude.json', content: JSON.stringify(state, null, 2) },
        { path: 'mcp.json', content: JSON.stringify(mcp, null, 2) },
      ],
    };
  },

  deliver: wakeNotice,

  parseUsage: (text) =>
    usageByMessage(text, '"usage"', (e) => {
      const m = e.message as { id?: string; usage?: Record<string, number> } | undefined;
      const u = e.type === 'assistant' ? m?.usage : undefined;
      // One line per content block, each repeating its message's usage.
      return u
        ? {
            id: m?.id,
            input: (u.input_tokens ?? 0) + (u.cache_read_input_tokens ?? 0) + (u.cache_creation_input_tokens ?? 0),
            output: u.output_tokens ?? 0,
          }
        : undefined;
    }),

  // CLAUDE_CONFIG_DIR/projects/<the folder, dashed>/<session id>.jsonl
  sessionFiles: { under: 'projects', name: /\.jsonl$/ },
  sessionState: ['projects'],
  sessionLine: claudeSessionLine,
  sessionId: (file) => claudeSessionId(file),
  sessionTurns: claudeSessionTurns,

  ...claudeStyleHooks((name) => canonicalOfVendorTool('claude', name), MCP_PREFIX),
};

/**
 * Claude's transcript lines: a person's prompt opens a turn; a turn the API ended (after
 * Claude's own retries) is a synthetic assistant message with `isApiErrorMessage`, Claude's
 * words for it ("Invalid API key · Fix external API key"), its `error` kind and HTTP status.
 * Claude runs StopFailure, not Stop, for it, so no task end of ours races this one.
 */
export function claudeSessionLine(line: string): SessionLine {
  if (!line.includes('"type":"assistant"') && !line.includes('"promptId"')) return undefined;
  let entry: {
    type?: string;
    isApiErrorMessage?: boolean;
    error?: string;
    apiErrorStatus?: number;
    message?: { id?: string; content?: unknown };
  };
  try {
    entry = JSON.parse(line) as typeof entry;
  } catch {
    return undefined;
  }
  if (entry.type === 'user' && typeof entry.message?.content === 'string') return { kind: 'turn' };
  if (entry.type !== 'assistant') return undefined;
  // One line per content block, each with its message's id.
  if (!entry.isApiErrorMessage) return { kind: 'model', ...(entry.message?.id ? { id: entry.message.id } : {}) };
  const content = Array.isArray(entry.message?.content) ? (entry.message.content as { text?: string }[]) : [];
  const words =
    content
      .map((c) => c.text ?? '')
      .join(' ')
      .trim() || `API error (${entry.error ?? 'unknown'})`;
  const auth =
    entry.error === 'authentication_failed' || entry.error === 'oauth_org_not_allowed' || entry.apiErrorStatus === 401;
  return {
    kind: 'failure',
    failure: { reason: `Claude Code: ${words}${entry.apiErrorStatus ? ` (HTTP ${entry.apiErrorStatus})` : ''}`, auth },
  };
}

/**
 * What Claude asks a person the first time, answered in the agent's own `.claude.json`
 * (docs/runtimes.md, "First-run answers"): onboarding done; the folder the agent was spawned
 * in trusted when its person trusted it (`flotilla trust`; otherwise the dialog is passed by
 * CLAUDE_CODE_SANDBOXED and the folder stays untrusted in Claude's eyes); and the spawner's
 * ANTHROPIC_API_KEY approved — Claude asks "Detected a custom API key … use this API key?"
 * (default No) and remembers a Yes as the key's last 20 characters, which is what is written.
 */
function firstRunAnswers(input: LaunchInput): Record<string, unknown> {
  const key = input.env.ANTHROPIC_API_KEY?.trim();
  return {
    hasCompletedOnboarding: true,
    ...(key ? { customApiKeyResponses: { approved: [key.slice(-20)], rejected: [] } } : {}),
    projects: {
      [input.cwd]: { ...(input.trusted ? { hasTrustDialogAccepted: true } : {}), hasCompletedProjectOnboarding: true },
    },
  };
}

const QUIET_ENV: Record<string, string> = {
  // Claude 2.1.197 reads this in --print mode only: an interactive first turn does not wait for MCP servers, which
  // is why a new session's task is held by its SessionStart hook, and a resumed one's typed (firstTurnWaitsForMcp).
  MCP_CONNECTION_NONBLOCKING: 'false',
  DISABLE_AUTOUPDATER: '1',
  DISABLE_TELEMETRY: '1',
  DISABLE_ERROR_REPORTING: '1',
  DISABLE_BUG_COMMAND: '1',
  CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
  CLAUDE_CODE_DISABLE_FEEDBACK_SURVEY: '1',
  CLAUDE_CODE_DISABLE_TERMINAL_TITLE: '1',
};
