import { createHash } from 'node:crypto';
import { realpathSync } from 'node:fs';
import { join, resolve, sep } from 'node:path';
import { canonicalOfVendorTool, MCP_FLEET_TOOLS, vendorPrimaryNames } from '../policy/tool-table.js';
import { CLAUDE_HOOK_EVENTS, claudeStyleHooks, hookSettings } from './hook-protocol.js';
import { codexSessionId, codexSessionTurns } from './codex-session.js';
import { wakeNotice } from './session-file.js';
import type { Launch, LaunchInput, PolicyInput, Runtime, SessionLine } from './types.js';

/**
 * Codex CLI (`@openai/codex`). Its config folder is CODEX_HOME (a per-agent one: the person's
 * ~/.codex is never read nor written): `config.toml` there carries the permissions, the fleet
 * MCP server and the model provider, `hooks.json` the hooks (Claude's protocol). Codex offers
 * MCP tools in a `mcp__flotilla` namespace and names them `mcp__flotilla__<tool>` in hooks;
 * its shell is `exec_command` (`Bash` in hook payloads).
 */
const MCP_PREFIX = 'mcp__flotilla__';
/**
 * Codex's own features with no Flotilla equivalent (sub-agents, goals, apps, browsers, images), off so they cannot
 * escape the policy.
 */
const EXTRA_FEATURES = [
  'multi_agent',
  'multi_agent_v2',
  'goals',
  'apps',
  'plugins',
  'browser_use',
  'computer_use',
  'image_generation',
  'in_app_browser',
  'memories',
];

export interface CodexPermissions {
  approvalPolicy: 'on-request' | 'never';
  sandboxMode: 'read-only' | 'workspace-write' | 'danger-full-access';
  /**
   * `[features]`: the shell tools off when the policy withholds the shell (or in plan mode), Codex's extras always off.
   */
  features: Record<string, boolean>;
  /** The fleet tools offered (`enabled_tools` of the flotilla MCP server). */
  fleetTools: string[];
  /**
   * The flotilla server's `default_tools_approval_mode`: `approve` runs a fleet tool without
   * asking (fleet tools never ask but in plan mode, §7, as in the harness); `auto` leaves it to
   * Codex, which under `on-request` asks about any MCP tool whose annotations do not say it is
   * harmless — every fleet tool, through the fleet's approval queue.
   */
  fleetApproval: 'approve' | 'auto';
}

/**
 * The policy as Codex's own settings. Codex has no per-tool deny rules for its built-ins, so a
 * withheld shell is a tool Codex does not offer at all (`features.shell_tool`/`unified_exec`
 * off: a call to it is refused by Codex as unsupported); the fleet tools are the flotilla MCP
 * server's `enabled_tools`. Modes (Codex 0.169 accepts only `on-request`, `never` and a
 * granular table; `untrusted` is refused at start): `plan` runs nothing (no shell, read-only
 * sandbox); `default` runs commands in Codex's read-only sandbox and asks in the pane before
 * anything that needs more (`on-request`); `accept_edits` adds writes inside the workspace;
 * `dont_ask` and `bypass_permissions` never ask (every offered tool runs).
 */
export function compileCodexPolicy(policy: PolicyInput): CodexPermissions {
  const allowed = new Set(policy.tools);
  const shell = allowed.has('shell') && policy.permissionMode !== 'plan';
  const features: Record<string, boolean> = { shell_tool: shell, unified_exec: shell };
  for (const f of EXTRA_FEATURES) features[f] = false;
  const fleetTools = MCP_FLEET_TOOLS.filter((t) => allowed.has(t));
  const fleet = { fleetTools, fleetApproval: 'approve' } as const;
  switch (policy.permissionMode) {
    case 'plan':
      return { approvalPolicy: 'never', sandboxMode: 'read-only', features, fleetTools, fleetApproval: 'auto' };
    case 'default':
      return { approvalPolicy: 'on-request', sandboxMode: 'read-only', features, ...fleet };
    case 'accept_edits':
      return { approvalPolicy: 'on-request', sandboxMode: 'workspace-write', features, ...fleet };
    case 'dont_ask':
      return { approvalPolicy: 'never', sandboxMode: 'danger-full-access', features, ...fleet };
    // Reached only when agents.allow_bypass_permissions let the definition load.
    case 'bypass_permissions':
      return { approvalPolicy: 'never', sandboxMode: 'danger-full-access', features, ...fleet };
  }
}

/** A TOML value: JSON's strings, numbers, booleans and arrays are valid TOML. */
const t = (v: unknown): string => JSON.stringify(v);

/** Codex's own names for the hook events (its `hooks.state` keys use them). */
const EVENT_KEYS: Record<string, string> = {
  UserPromptSubmit: 'user_prompt_submit',
  Stop: 'stop',
  PreToolUse: 'pre_tool_use',
  PermissionRequest: 'permission_request',
};

/**
 * Codex runs a hook only once it is trusted: `[hooks.state."<file>:<event>:0:0"]` with
 * `trusted_hash` = sha256 of the hook's normalised declaration (sorted-key compact JSON). The
 * hooks are Flotilla's own, written just now, so they are trusted by hash — a repository's
 * hooks still need a person's review (docs/runtimes.md). A Codex release that changes the hash
 * shows its "Hooks need review" screen, which the mode tests catch.
 */
function hookTrust(configDir: string, hooks: Record<string, unknown[]>): string[] {
  const lines: string[] = [];
  for (const [event, groups] of Object.entries(hooks)) {
    const group = groups[0] as { matcher?: string; hooks: { command: string; timeout: number }[] };
    const handler = group.hooks[0]!;
    const identity = {
      event_name: EVENT_KEYS[event],
      hooks: [{ async: false, command: handler.command, timeout: handler.timeout, type: 'command' }],
      ...(group.matcher !== undefined ? { matcher: group.matcher } : {}),
    };
    const hash = createHash('sha256').update(JSON.stringify(identity)).digest('hex');
    lines.push(
      '',
      `[hooks.state.${t(`${join(configDir, 'hooks.json')}:${EVENT_KEYS[event]}:0:0`)}]`,
      `trusted_hash = ${t(`sha256:${hash}`)}`,
    );
  }
  return lines;
}

function configToml(input: LaunchInput, p: CodexPermissions, hooks: Record<string, unknown[]>): string {
  const lines = [
    "# Written by Flotilla for one fleet agent; the person's ~/.codex is not read.",
    `approval_policy = ${t(p.approvalPolicy)}`,
    `sandbox_mode = ${t(p.sandboxMode)}`,
    'check_for_update_on_startup = false',
    'web_search = "disabled"',
    'disable_paste_burst = true',
    'hide_agent_reasoning = true',
    // Codex runs commands in a login shell by default, and /etc/profile resets PATH: Flotilla's
    // tools (`flotilla`, `spawn-agent`) first on the agent's PATH would be gone from its shell.
    'allow_login_shell = false',
  ];
  // A custom endpoint (OPENAI_BASE_URL) or an API key from the spawner: a provider of our own, Responses wire.
  const base = input.env.OPENAI_BASE_URL?.trim();
  const key = input.env.OPENAI_API_KEY?.trim();
  if (base || key) lines.unshift('model_provider = "flotilla"');
  if (input.model) lines.unshift(`model = ${t(input.model)}`);
  if (input.modelCatalogFile) lines.push(`model_catalog_json = ${t(input.modelCatalogFile)}`);
  // An older model of Codex's catalogue opens a "Meet <new model>" dialog before the first turn
  // unless its upgrade was seen: the person chose the model, so it was (docs/runtimes.md, "First-run answers").
  const upgrade = input.model ? input.modelUpgrades?.[input.model] : undefined;
  lines.push('', '[analytics]', 'enabled = false', '', '[feedback]', 'enabled = false', '', '[features]');
  for (const [k, v] of Object.entries(p.features)) lines.push(`${k} = ${v}`);
  lines.push(
    '',
    '[mcp_servers.flotilla]',
    `command = ${t(input.mcp.command)}`,
    `args = ${t(input.mcp.args)}`,
    'startup_timeout_sec = 120',
    'tool_timeout_sec = 3600',
    'required = true',
    `enabled_tools = ${t(p.fleetTools)}`,
    `default_tools_approval_mode = ${t(p.fleetApproval)}`,
  );
  // Codex starts its MCP servers with a few variables of its own choosing: the rest are named here.
  const mcpEnv = Object.entries(input.mcp.env ?? {});
  if (mcpEnv.length) lines.push(`env = { ${mcpEnv.map(([k, v]) => `${k} = ${t(v)}`).join(', ')} }`);
  // "Trust this folder?" stands before every start in a folder this CODEX_HOME has not seen.
  // A folder its person trusted (flotilla trust) is trusted here, in the agent's own config; the
  // permissions above are repeated on the command line, which outranks its .codex/config.toml.
  // Any other is "untrusted": Codex loads none of its config, hooks or exec policies, and asks
  // only "Open restricted", which the shim answers (restrictedOpen below).
  lines.push('', `[projects.${t(input.cwd)}]`, `trust_level = ${t(input.trusted ? 'trusted' : 'untrusted')}`);
  if (upgrade) lines.push('', '[notice.model_migrations]', `${t(input.model)} = ${t(upgrade)}`);
  lines.push(...hookTrust(input.configDir, hooks));
  if (base || key) {
    lines.push(
      '',
      '[model_providers.flotilla]',
      'name = "OpenAI (from the spawner\'s environment)"',
      `base_url = ${t(base || 'https://api.openai.com/v1')}`,
      'wire_api = "responses"',
      // No key: the person's login (auth.json, linked in) authenticates the requests.
      ...(key ? ['env_key = "OPENAI_API_KEY"'] : input.loginFile ? ['requires_openai_auth = true'] : []),
    );
  }
  return lines.join('\n') + '\n';
}

/**
 * Codex runs each command of its own sandbox (`default`, `accept_edits`) through helper links
 * it makes in CODEX_HOME, and refuses to make them inside the temporary folder, where anyone
 * may plant files; without them every command fails. A project tried out in `mktemp -d` keeps
 * its fleet root, and so the agent's CODEX_HOME, there. That folder is the agent's own (mode
 * 0700), so the temporary folder moves into it: Codex sees none around CODEX_HOME, and the
 * temporary files of its commands stay the agent's (docs/runtimes.md, "Codex's own sandbox").
 */
function commandTmp(input: Pick<LaunchInput, 'configDir' | 'env'>): { TMPDIR?: string } {
  const real = (p: string) => {
    try {
      return realpathSync(p);
    } catch {
      return resolve(p);
    }
  };
  const tmp = real(input.env.TMPDIR?.trim() || '/tmp');
  const home = real(input.configDir);
  return home.startsWith(tmp.endsWith(sep) ? tmp : tmp + sep) ? { TMPDIR: join(input.configDir, 'tmp') } : {};
}

/** The permissions as command-line overrides: Codex's session flags outrank a trusted project's config. */
function permissionFlags(p: CodexPermissions): string[] {
  const out = ['--ask-for-approval', p.approvalPolicy, '--sandbox', p.sandboxMode];
  for (const [k, v] of Object.entries(p.features)) out.push(v ? '--enable' : '--disable', k);
  return out;
}

export const codex: Runtime = {
  name: 'codex',
  title: 'Codex',
  npmPackage: '@openai/codex',
  binary: 'codex',
  binEnv: 'FLOTILLA_CODEX_BIN',
  hookEvents: CLAUDE_HOOK_EVENTS,
  mcpToolPrefix: MCP_PREFIX,
  toolNames: vendorPrimaryNames('codex'),
  extraTools: EXTRA_FEATURES,
  // Codex connects its MCP servers (required = true) before the first turn: no firstTurnWaitsForMcp.
  inputPrompt: ['›'],
  compilePolicy: compileCodexPolicy,
  // Codex 0.169's screen for a folder whose trust_level is untrusted: option 1, highlighted, opens it restricted.
  restrictedOpen: { shows: 'Open restricted', unless: 'Trust and continue', key: 'Enter' },
  // Codex 0.169 shows its approval prompt only once no PermissionRequest hook decided; its
  // shortcuts pick an answer wherever the highlight is: `y` runs the call once, Esc refuses it
  // ("No, and tell Codex what to do differently": the turn stops for the person's words).
  paneQuestion: { shows: 'Press enter to confirm or esc to cancel', approve: 'y', deny: 'Escape' },
  // The catalogue compiled into this Codex: each model's `upgrade.model` is the dialog's offer.
  modelCatalog: {
    argv: ['debug', 'models', '--bundled'],
    env: (configDir) => ({ CODEX_HOME: configDir }),
    upgrades: codexUpgrades,
    forFleet: codexFleetCatalog,
  },

  launch(input: LaunchInput, policy: PolicyInput): Launch {
    const permissions = compileCodexPolicy(policy);
    // The permission hook files the question and returns (paneQuestion): it waits for nobody.
    const hooks = { hooks: hookSettings(input, codex.hookEvents) };
    const argv = [
      // `flotilla resume`: `codex resume <thread id> [prompt]` takes the same options as a new session.
      ...(input.resume ? ['resume'] : []),
      // No shared background server: the CLI and everything it starts stay this agent's descendants.
      '--no-daemon',
      // A folder its person trusted (flotilla trust) brings its hooks as for the person: Codex's
      // "Hooks need review" screen would hold the agent for good. Elsewhere its hooks stay off.
      ...(input.trusted ? ['--dangerously-bypass-hook-trust'] : []),
      ...permissionFlags(permissions),
      ...(input.resume
        ? ['--', input.resume, ...(input.prompt.trim() ? [input.prompt] : [])]
        : input.prompt.trim()
          ? ['--', input.prompt]
          : []),
    ];
    return {
      argv,
      env: { CODEX_HOME: input.configDir, ...commandTmp(input) },
      // The person's login by reference: Codex rewrites auth.json in place when it refreshes.
      ...(input.loginFile ? { links: [{ path: 'auth.json', target: input.loginFile }] } : {}),
      files: [
        { path: 'config.toml', content: configToml(input, permissions, hooks.hooks) },
        { path: 'hooks.json', content: JSON.stringify(hooks, null, 2) },
        ...(commandTmp(input).TMPDIR
          ? [
              {
                path: 'tmp/README',
                content:
                  'The temporary folder of this agent\'s Codex and its commands (docs/runtimes.md, "Codex\'s own sandbox").\n',
              },
            ]
          : []),
      ],
    };
  },

  deliver: wakeNotice,

  parseUsage(text) {
    // Each model response logs a token_count event whose total_token_usage is the session's running total.
    let last: { input_tokens?: number; cached_input_tokens?: number; output_tokens?: number } | undefined;
    let turns = 0;
    for (const line of text.split('\n')) {
      if (!line.includes('"token_count"')) continue;
      let entry: { type?: string; payload?: { type?: string; info?: { total_token_usage?: typeof last } | null } };
      try {
        entry = JSON.parse(line) as typeof entry;
      } catch {
        continue;
      }
      const total =
        entry.type === 'event_msg' && entry.payload?.type === 'token_count'
          ? entry.payload.info?.total_token_usage
          : undefined;
      if (!total) continue;
      last = total;
      turns++;
    }
    return { inputTokens: last?.input_tokens ?? 0, outputTokens: last?.output_tokens ?? 0, turns };
  },

  // CODEX_HOME/sessions/<yyyy>/<mm>/<dd>/rollout-<time>-<thread>.jsonl
  sessionFiles: { under: 'sessions', name: /^rollout-.*\.jsonl$/ },
  // Not its state databases: they hold each rollout's absolute path, and `codex resume` would append to the old agent's
  // file.
  sessionState: ['sessions'],
  sessionLine: codexSessionLine,
  sessionId: (_file, text) => codexSessionId(text),
  sessionTurns: codexSessionTurns,

  ...claudeStyleHooks((name) => canonicalOfVendorTool('codex', name), MCP_PREFIX),
};

/** `codex debug models --bundled`: `{ models: [{ slug, upgrade: { model } | null }] }`. */
export function codexUpgrades(stdout: string): Record<string, string> | undefined {
  let parsed: { models?: { slug?: unknown; upgrade?: { model?: unknown } | null }[] };
  try {
    parsed = JSON.parse(stdout) as typeof parsed;
  } catch {
    return undefined;
  }
  if (!Array.isArray(parsed.models)) return undefined;
  const out: Record<string, string> = {};
  for (const m of parsed.models) {
    if (typeof m.slug === 'string' && typeof m.upgrade?.model === 'string') out[m.slug] = m.upgrade.model;
  }
  return out;
}

/**
 * The catalogue a Codex agent runs on: Codex's own, with every model's `multi_agent_version`
 * set to `v1`. A model marked `v2` (the default model of 0.169 among them) is offered Codex's
 * own sub-agents — `spawn_agent`, `followup_task`, `send_message`, `wait_agent`… — whatever
 * `features.multi_agent_v2` says; under `v1` the `multi_agent` feature decides, and it is off.
 * Sub-agents inside the CLI would be outside the fleet's lineage, caps, budget and transcript
 * (docs/runtimes.md, "Codex's model catalogue"). Undefined when the output is not a catalogue.
 */
export function codexFleetCatalog(stdout: string): string | undefined {
  let parsed: { models?: Record<string, unknown>[] };
  try {
    parsed = JSON.parse(stdout) as typeof parsed;
  } catch {
    return undefined;
  }
  if (!Array.isArray(parsed.models)) return undefined;
  for (const m of parsed.models) m.multi_agent_version = 'v1';
  return JSON.stringify(parsed);
}

/**
 * Codex's rollout lines: `task_started` opens a turn, a `token_count` ends each model response; a turn the API ended
 * with an error is a
 * `task_complete` carrying `error` (its message, and the HTTP status in `codex_error_info`) —
 * Codex runs no Stop hook for it. A refused credential (401, 403) is an authentication failure.
 */
export function codexSessionLine(line: string): SessionLine {
  if (!line.includes('"task_') && !line.includes('"token_count"')) return undefined;
  let entry: {
    type?: string;
    payload?: { type?: string; info?: unknown; error?: { message?: string; codex_error_info?: unknown } | null };
  };
  try {
    entry = JSON.parse(line) as typeof entry;
  } catch {
    return undefined;
  }
  if (entry.type !== 'event_msg') return undefined;
  if (entry.payload?.type === 'task_started') return { kind: 'turn' };
  // Each model response logs its token count (parseUsage reads the same lines).
  if (entry.payload?.type === 'token_count') return entry.payload.info ? { kind: 'model' } : undefined;
  const error = entry.payload?.type === 'task_complete' ? entry.payload.error : undefined;
  if (!error) return undefined;
  const reason = error.message?.trim() || 'Codex ended the turn with an error';
  const status = /"http_status_code":(\d+)/.exec(JSON.stringify(error.codex_error_info ?? {}))?.[1];
  const auth = status === '401' || status === '403' || /\b(401 Unauthorized|403 Forbidden)\b/.test(reason);
  return { kind: 'failure', failure: { reason: `Codex: ${reason}`, auth } };
}
