import { canonicalOfVendorTool, MCP_FLEET_TOOLS, vendorPrimaryNames } from '../policy/tool-table.js';
import { CLAUDE_HOOK_EVENTS, claudeStyleHooks, hookSettings } from './hook-protocol.js';
import { wakeNotice } from './session-file.js';
import type { Launch, LaunchInput, PolicyInput, Runtime } from './types.js';

/**
 * Codex CLI (`@openai/codex`). Its config folder is CODEX_HOME (a per-agent one: the person's
 * ~/.codex is never read nor written): `config.toml` there carries the permissions, the fleet
 * MCP server and the model provider, `hooks.json` the hooks (Claude's protocol). Codex offers
 * MCP tools in a `mcp__flotilla` namespace and names them `mcp__flotilla__<tool>` in hooks;
 * its shell is `exec_command` (`Bash` in hook payloads).
 */
const MCP_PREFIX = 'mcp__flotilla__';
/** Codex's own features with no Flotilla equivalent (sub-agents, goals, apps, browsers, images), off so they cannot escape the policy. */
const EXTRA_FEATURES = ['multi_agent', 'multi_agent_v2', 'goals', 'apps', 'plugins', 'browser_use', 'computer_use', 'image_generation', 'in_app_browser', 'memories'];

export interface CodexPermissions {
  approvalPolicy: 'untrusted' | 'on-request' | 'never';
  sandboxMode: 'read-only' | 'workspace-write' | 'danger-full-access';
  /** `[features]`: the shell tools off when the policy withholds the shell (or in plan mode), Codex's extras always off. */
  features: Record<string, boolean>;
  /** The fleet tools offered (`enabled_tools` of the flotilla MCP server). */
  fleetTools: string[];
}

/**
 * The policy as Codex's own settings. Codex has no per-tool deny rules for its built-ins, so a
 * withheld shell is a tool Codex does not offer at all (`features.shell_tool`/`unified_exec`
 * off: a call to it is refused by Codex as unsupported); the fleet tools are the flotilla MCP
 * server's `enabled_tools`. Modes: `plan` runs nothing (no shell, read-only sandbox);
 * `default` asks in the pane before any command Codex does not know to be read-only
 * (`untrusted`); `accept_edits` adds writes inside the workspace; `dont_ask` and
 * `bypass_permissions` never ask (every offered tool runs).
 */
export function compileCodexPolicy(policy: PolicyInput): CodexPermissions {
  const allowed = new Set(policy.tools);
  const shell = allowed.has('shell') && policy.permissionMode !== 'plan';
  const features: Record<string, boolean> = { shell_tool: shell, unified_exec: shell };
  for (const f of EXTRA_FEATURES) features[f] = false;
  const fleetTools = MCP_FLEET_TOOLS.filter((t) => allowed.has(t));
  switch (policy.permissionMode) {
    case 'plan': return { approvalPolicy: 'never', sandboxMode: 'read-only', features, fleetTools };
    case 'default': return { approvalPolicy: 'untrusted', sandboxMode: 'danger-full-access', features, fleetTools };
    case 'accept_edits': return { approvalPolicy: 'untrusted', sandboxMode: 'workspace-write', features, fleetTools };
    case 'dont_ask': return { approvalPolicy: 'never', sandboxMode: 'danger-full-access', features, fleetTools };
    // Reached only when agents.allow_bypass_permissions let the definition load.
    case 'bypass_permissions': return { approvalPolicy: 'never', sandboxMode: 'danger-full-access', features, fleetTools };
  }
}

/** A TOML value: JSON's strings, numbers, booleans and arrays are valid TOML. */
const t = (v: unknown): string => JSON.stringify(v);

function configToml(input: LaunchInput, p: CodexPermissions): string {
  const lines = [
    '# Written by Flotilla for one fleet agent; the person\'s ~/.codex is not read.',
    `approval_policy = ${t(p.approvalPolicy)}`,
    `sandbox_mode = ${t(p.sandboxMode)}`,
    'check_for_update_on_startup = false',
    'web_search = "disabled"',
    'disable_paste_burst = true',
    'hide_agent_reasoning = true',
  ];
  // A custom endpoint (OPENAI_BASE_URL) or an API key from the spawner: a provider of our own, Responses wire.
  const base = input.env.OPENAI_BASE_URL?.trim();
  const key = input.env.OPENAI_API_KEY?.trim();
  if (base || key) lines.unshift('model_provider = "flotilla"');
  if (input.model) lines.unshift(`model = ${t(input.model)}`);
  lines.push('', '[analytics]', 'enabled = false', '', '[feedback]', 'enabled = false', '', '[features]');
  for (const [k, v] of Object.entries(p.features)) lines.push(`${k} = ${v}`);
  lines.push('', '[mcp_servers.flotilla]', `command = ${t(input.mcp.command)}`, `args = ${t(input.mcp.args)}`,
    'startup_timeout_sec = 120', 'tool_timeout_sec = 3600', 'required = true', `enabled_tools = ${t(p.fleetTools)}`);
  if (base || key) {
    lines.push('', '[model_providers.flotilla]', 'name = "OpenAI (from the spawner\'s environment)"',
      `base_url = ${t(base || 'https://api.openai.com/v1')}`, 'wire_api = "responses"', ...(key ? ['env_key = "OPENAI_API_KEY"'] : []));
  }
  return lines.join('\n') + '\n';
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
  // Codex connects its MCP servers (required = true) before the first turn.
  promptAfterMcp: false,
  compilePolicy: compileCodexPolicy,

  launch(input: LaunchInput, policy: PolicyInput): Launch {
    const permissions = compileCodexPolicy(policy);
    const hooks = { hooks: hookSettings(input, codex.hookEvents) };
    const argv = [
      // No shared background server: the CLI and everything it starts stay this agent's descendants.
      '--no-daemon',
      // The hooks are Flotilla's own, written just now into this agent's config folder.
      '--dangerously-bypass-hook-trust',
      ...(input.prompt.trim() ? ['--', input.prompt] : []),
    ];
    return {
      argv,
      env: { CODEX_HOME: input.configDir },
      files: [
        { path: 'config.toml', content: configToml(input, permissions) },
        { path: 'hooks.json', content: JSON.stringify(hooks, null, 2) },
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
      try { entry = JSON.parse(line) as typeof entry; } catch { continue; }
      const total = entry.type === 'event_msg' && entry.payload?.type === 'token_count' ? entry.payload.info?.total_token_usage : undefined;
      if (!total) continue;
      last = total;
      turns++;
    }
    return { inputTokens: last?.input_tokens ?? 0, outputTokens: last?.output_tokens ?? 0, turns };
  },

  ...claudeStyleHooks((name) => canonicalOfVendorTool('codex', name), MCP_PREFIX),
};
