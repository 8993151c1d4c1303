import { join } from 'node:path';
import { canonicalOfVendorTool, MCP_FLEET_TOOLS, TOOL_TABLE, vendorPrimaryNames } from '../policy/tool-table.js';
import { claudeStyleHooks, hookSettings } from './hook-protocol.js';
import { geminiSelectedAuth } from './login.js';
import { geminiSessionId, geminiSessionTurns } from './gemini-session.js';
import { usageByMessage, wakeNotice } from './session-file.js';
import type { HookReply, Launch, LaunchInput, PolicyInput, Runtime, SessionLine } from './types.js';

/**
 * Gemini CLI (`@google/gemini-cli`). Its home is GEMINI_CLI_HOME (a per-agent one: the
 * person's ~/.gemini is never read nor written): `.gemini/settings.json` there carries the
 * hooks, the fleet MCP server and the auth choice; the permissions are a policy file passed
 * with `--policy`, plus `--approval-mode`. Gemini names MCP tools `mcp_flotilla_<tool>`.
 */
const MCP_PREFIX = 'mcp_flotilla_';
/** Gemini's own tools with no Flotilla equivalent: sub-agents and the web. */
const EXTRA = ['invoke_agent', 'web_fetch', 'google_web_search'];
const HOOK_EVENTS = {
  'turn-start': 'BeforeAgent',
  'turn-end': 'AfterAgent',
  'pre-tool': 'BeforeTool',
  permission: 'Notification',
} as const;

export interface GeminiPermissions {
  approvalMode: 'plan' | 'default' | 'auto_edit' | 'yolo';
  /** Built-in tools the policy withholds, plus Gemini's extras: `deny` rules. */
  deny: string[];
  /** The fleet tools offered (`includeTools` of the flotilla MCP server). */
  fleetTools: string[];
}

/**
 * The policy as Gemini's own settings: every withheld tool is a `deny` rule in a user-tier
 * policy file at the top priority, above the allow-everything of `yolo` and any workspace
 * policy a repository brings; the fleet tools are the MCP server's `includeTools` (trusted,
 * so they never ask, as in the harness). Modes map onto Gemini's approval modes.
 */
export function compileGeminiPolicy(policy: PolicyInput): GeminiPermissions {
  const allowed = new Set(policy.tools);
  // Every Gemini tool the tool table (policy/tool-table.ts) files under a withheld canonical one: `glob` takes
  // `list_directory` with it.
  const deny = [...TOOL_TABLE.filter((r) => !allowed.has(r.name)).flatMap((r) => r.vendor.gemini), ...EXTRA];
  const fleetTools = MCP_FLEET_TOOLS.filter((t) => allowed.has(t));
  const approvalMode = (
    {
      plan: 'plan',
      default: 'default',
      accept_edits: 'auto_edit',
      dont_ask: 'yolo',
      bypass_permissions: 'yolo',
    } as const
  )[policy.permissionMode];
  return { approvalMode, deny, fleetTools };
}

function policyToml(p: GeminiPermissions): string {
  const rules = p.deny.map(
    (tool) =>
      `[[rule]]\ntoolName = ${JSON.stringify(tool)}\ndecision = "deny"\npriority = 999\ndenyMessage = "withheld by this agent's Flotilla definition"\n`,
  );
  return `# Written by Flotilla for one fleet agent: the tools its definition withholds.\n${rules.join('\n')}`;
}

const hooks = claudeStyleHooks((name) => canonicalOfVendorTool('gemini', name), MCP_PREFIX, HOOK_EVENTS['turn-start']);

export const gemini: Runtime = {
  name: 'gemini',
  title: 'Gemini CLI',
  npmPackage: '@google/gemini-cli',
  binary: 'gemini',
  binEnv: 'FLOTILLA_GEMINI_BIN',
  hookEvents: HOOK_EVENTS,
  mcpToolPrefix: MCP_PREFIX,
  toolNames: vendorPrimaryNames('gemini'),
  extraTools: EXTRA,
  // `-i` holds the first prompt until the CLI (its MCP servers included) is initialised: no firstTurnWaitsForMcp.
  // ` > `, or ` * ` in yolo mode (dont_ask, bypass_permissions): the ` > ` above it is then the
  // conversation's, a message it took.
  inputPrompt: [' > ', ' * '],
  // Gemini 0.61 takes Enter as a newline within 30 ms of reading a paste (bufferFastReturn), and
  // until 40 ms after it (InputPrompt's recentUnsafePasteTime: a timer, then a re-render); it
  // draws the paste ~33 ms after reading it (Ink's 30 fps). Its 40 ms again once the pane shows
  // it: no newline in 16 presses at load 8 (10 ms: 3 in 20); one that lands is undone (typist.ts).
  pasteGuardMs: 40,
  // The wake notice as keys: no paste guard, only bufferFastReturn's 30 ms after the last key, which the 40 outlast.
  // At load ~6 the first Enter after a pasted notice was a newline in 5 runs of 5, after a typed one in none of 10.
  // In vim mode (a trusted folder's settings) its NORMAL mode takes keys as commands; its empty input box says so.
  typesNotice: { unlessShown: "Press 'i' for INSERT mode" },
  // A later settings read (after `--skip-trust` took effect) would bring a folder's .gemini/
  // (its .env, policies, commands, settings): hidden unless trusted.
  folderSettings: ['.gemini'],
  compilePolicy: compileGeminiPolicy,

  launch(input: LaunchInput, policy: PolicyInput): Launch {
    const p = compileGeminiPolicy(policy);
    const keyed = Boolean(input.env.GEMINI_API_KEY?.trim() || input.env.GOOGLE_GEMINI_BASE_URL?.trim());
    const settings = {
      general: { disableAutoUpdate: true, disableUpdateNag: true },
      privacy: { usageStatisticsEnabled: false },
      telemetry: { enabled: false },
      // Gemini's loop detection asks a person whether to keep it (a dialog the agent would wait
      // at for good); the fleet's max_turns, timeout_secs and budget stop a loop instead.
      model: { disableLoopDetection: true },
      // An untrusted folder's .env (any variable: GEMINI_API_KEY, GOOGLE_GEMINI_BASE_URL,
      // BASH_ENV for every hook) is not read; its .gemini/.env is hidden with its .gemini/.
      ...(input.trusted ? {} : { advanced: { ignoreLocalEnv: true } }),
      ...(keyed
        ? { security: { auth: { selectedType: 'gemini-api-key' } } }
        : // The person's Google login by reference, with the auth type they selected.
          input.loginFile
          ? { security: { auth: { selectedType: geminiSelectedAuth(input.env) ?? 'oauth-personal' } } }
          : {}),
      hooks: hookSettings(input, HOOK_EVENTS, { toolMatcher: '.*', timeout: 60_000 }),
      mcpServers: {
        flotilla: {
          command: input.mcp.command,
          args: input.mcp.args,
          trust: true,
          includeTools: p.fleetTools,
          timeout: 3_600_000,
        },
      },
    };
    const argv = [
      '--approval-mode',
      p.approvalMode,
      '--policy',
      join(input.configDir, 'policy.toml'),
      // The repository's own MCP servers stay out; the fleet's is the only one.
      '--allowed-mcp-server-names',
      'flotilla',
      // The agent works in the folder it was spawned in; a trust dialog would wait for a person.
      '--skip-trust',
      ...(input.model ? ['--model', input.model] : []),
      // `flotilla resume`: the session by its id, from this agent's own project folder.
      ...(input.resume ? ['--resume', input.resume] : []),
      ...(input.prompt.trim() ? ['--prompt-interactive', input.prompt] : []),
    ];
    return {
      argv,
      env: {
        GEMINI_CLI_HOME: input.configDir,
        // One process: Gemini would otherwise relaunch itself as a child, and a SIGKILL would leave that child.
        GEMINI_CLI_NO_RELAUNCH: 'true',
        // Gemini runs each hook with `bash -c` over socket pipes, which bash takes for an ssh
        // session unless SHLVL is set: it would read ~/.bashrc before every hook.
        SHLVL: '1',
        // Gemini reads its settings before `--skip-trust` takes effect, so that flag alone keeps
        // the folder's .gemini/settings.json out at start; a folder its person trusted (flotilla
        // trust) is trusted from the first read, and its settings load as for the person.
        ...(input.trusted ? { GEMINI_CLI_TRUST_WORKSPACE: 'true' } : {}),
      },
      // Gemini rewrites oauth_creds.json in place (writeFile) when it refreshes: the link stays a link.
      ...(input.loginFile && !keyed ? { links: [{ path: '.gemini/oauth_creds.json', target: input.loginFile }] } : {}),
      files: [
        { path: '.gemini/settings.json', content: JSON.stringify(settings, null, 2) },
        { path: 'policy.toml', content: policyToml(p) },
      ],
    };
  },

  deliver: wakeNotice,

  parseUsage: (text) =>
    usageByMessage(text, '"tokens"', (e) => {
      const t = e.type === 'gemini' ? (e.tokens as { input?: number; output?: number } | undefined) : undefined;
      return t
        ? { id: typeof e.id === 'string' ? e.id : undefined, input: t.input ?? 0, output: t.output ?? 0 }
        : undefined;
    }),

  // GEMINI_CLI_HOME/.gemini/tmp/<project>/chats/session-<time>-<id>.jsonl
  sessionFiles: { under: '.gemini/tmp', name: /^session-.*\.jsonl$/ },
  // The project map names each folder's chats directory (`tmp/<project>/chats`).
  sessionState: ['.gemini/projects.json', '.gemini/tmp'],
  // Its resumed chat, once read, marks the file with this update (ChatRecordingService) just
  // before it replaces the chat `-i`'s turn may already have begun with. The chat it started
  // with can write into the same file (its name is the minute and the session id): a header
  // line and a `messages` update, never this.
  resumeLoaded: (appended) => appended.includes('{"$set":{"sessionId":'),
  sessionLine: geminiSessionLine,
  sessionId: (_file, text) => geminiSessionId(text),
  sessionTurns: geminiSessionTurns,

  ...hooks,
  // "[no response text]" is Gemini's stand-in for a turn with no answer (an API error among them), not an answer.
  finalAnswer: (p) =>
    typeof p.prompt_response === 'string' && p.prompt_response !== '[no response text]' ? p.prompt_response : undefined,
  // Gemini's tool hooks read a top-level decision.
  denyTool: (reason): HookReply => ({ stdout: JSON.stringify({ decision: 'deny', reason }) + '\n', exitCode: 0 }),
  // `continue: false` ends Gemini's turn at the refused call (its "Agent execution stopped"):
  // a plain refusal is sent on to the model with the same prompt id, which runs no BeforeAgent
  // hook, and the model is asked again until the limit's Escape lands.
  denyToolAndStop: (reason): HookReply => ({
    stdout: JSON.stringify({ decision: 'deny', reason, continue: false, stopReason: reason }) + '\n',
    exitCode: 0,
  }),
  // `ask` makes Gemini show its own confirmation whatever its approval mode.
  askTool: (reason): HookReply => ({
    stdout: JSON.stringify({ decision: 'ask', reason, systemMessage: reason }) + '\n',
    exitCode: 0,
  }),
  // Gemini 0.61 tells its Notification hook about each confirmation it is about to show, and
  // takes no answer from any hook: the shim answers the prompt in the pane if the queue is
  // first. `1` picks "Allow once" from anywhere in the list; Esc is "No, suggest changes",
  // which ends the turn for the person's words.
  paneQuestion: { shows: 'Allow once', approve: '1', deny: 'Escape' },
  questionCall: geminiQuestion,
};

/**
 * The call a Gemini confirmation asks about, from its Notification hook's `ToolPermission`
 * payload: `details` carries the confirmation's own fields (`exec`: the command; `edit`: the
 * file; `mcp`: the server's tool), not the tool call.
 */
export function geminiQuestion(
  payload: Record<string, unknown>,
): { tool: string; command?: string; input?: Record<string, unknown> } | undefined {
  if (payload.notification_type !== 'ToolPermission') return undefined;
  const d = (payload.details ?? {}) as {
    type?: unknown;
    title?: unknown;
    command?: unknown;
    filePath?: unknown;
    fileName?: unknown;
    toolName?: unknown;
    serverName?: unknown;
    prompt?: unknown;
  };
  const str = (v: unknown) => (typeof v === 'string' ? v : undefined);
  switch (d.type) {
    case 'exec': {
      const command = str(d.command) ?? '';
      return { tool: 'shell', command, input: { command } };
    }
    case 'edit':
      return { tool: 'edit', input: { path: str(d.filePath) ?? str(d.fileName) ?? '?' } };
    case 'mcp': {
      const name = str(d.toolName) ?? '?';
      return {
        tool: name.startsWith(MCP_PREFIX) ? name.slice(MCP_PREFIX.length) : name,
        input: { server: str(d.serverName) ?? '?' },
      };
    }
    default:
      return { tool: str(d.title) ?? 'unknown', input: { prompt: str(d.prompt) ?? str(payload.message) ?? '' } };
  }
}

/**
 * Gemini's session lines: a `user` message opens a turn, a `gemini` message is a model answer; an API error is an
 * `error` entry
 * (`[API Error: {"error":{"code":401,…}}]`). Gemini still runs its AfterAgent hook for that
 * turn, with no answer: the turn-end hook leaves such a turn to the shim, which reads this.
 */
export function geminiSessionLine(line: string): SessionLine {
  if (!line.includes('"type":"user"') && !line.includes('"type":"error"') && !line.includes('"type":"gemini"'))
    return undefined;
  let entry: { type?: string; id?: unknown; content?: unknown };
  try {
    entry = JSON.parse(line) as typeof entry;
  } catch {
    return undefined;
  }
  if (entry.type === 'user') return { kind: 'turn' };
  if (entry.type === 'gemini') return { kind: 'model', ...(typeof entry.id === 'string' ? { id: entry.id } : {}) };
  if (entry.type !== 'error') return undefined;
  const reason = typeof entry.content === 'string' ? entry.content.trim() : 'Gemini CLI ended the turn with an error';
  const auth = /"code":\s*(401|403)\b|UNAUTHENTICATED|PERMISSION_DENIED|API_KEY_INVALID/.test(reason);
  return { kind: 'failure', failure: { reason: `Gemini CLI: ${reason}`, auth } };
}
