import { describe, expect, it } from 'vitest';
import { codex, compileCodexPolicy } from '../../src/runtimes/codex.js';
import { ALL_TOOLS, launchInput } from './launch-input.js';

describe('codex runtime: policy and config', () => {
  it('a withheld shell is a shell Codex does not offer; withheld fleet tools are left out of enabled_tools', () => {
    const p = compileCodexPolicy({ tools: ['read', 'send_message'], permissionMode: 'dont_ask' });
    expect(p.features).toMatchObject({ shell_tool: false, unified_exec: false, multi_agent: false });
    expect(p.fleetTools).toEqual(['send_message']);
    expect(compileCodexPolicy({ tools: ALL_TOOLS, permissionMode: 'dont_ask' }).features).toMatchObject({
      shell_tool: true,
      unified_exec: true,
    });
  });

  it.each([
    ['plan', 'never', 'read-only', false, 'auto'],
    ['default', 'on-request', 'read-only', true, 'approve'],
    ['accept_edits', 'on-request', 'workspace-write', true, 'approve'],
    ['dont_ask', 'never', 'danger-full-access', true, 'approve'],
    ['bypass_permissions', 'never', 'danger-full-access', true, 'approve'],
  ] as const)('%s → approval %s, sandbox %s (fleet tools: %s, %s)', (mode, approval, sandbox, shell, fleet) => {
    const p = compileCodexPolicy({ tools: ALL_TOOLS, permissionMode: mode });
    expect(p).toMatchObject({ approvalPolicy: approval, sandboxMode: sandbox, fleetApproval: fleet });
    expect(p.features.shell_tool).toBe(shell);
    // Fleet tools run without a question wherever the mode runs anything (§7), as in the harness.
    const toml = codex
      .launch(launchInput({}), { tools: ALL_TOOLS, permissionMode: mode })
      .files.find((f) => f.path === 'config.toml')!.content;
    const server = toml.slice(toml.indexOf('[mcp_servers.flotilla]')).split('\n\n')[0]!;
    expect(server).toContain(`\ndefault_tools_approval_mode = "${fleet}"`);
  });

  it('OPENAI_BASE_URL and OPENAI_API_KEY become a Responses provider in config.toml; the hooks go to hooks.json', () => {
    const l = codex.launch(
      launchInput({ OPENAI_BASE_URL: 'http://127.0.0.1:9/v1', OPENAI_API_KEY: 'sk-never-in-config' }),
      { tools: ALL_TOOLS, permissionMode: 'dont_ask' },
    );
    const toml = l.files.find((f) => f.path === 'config.toml')!.content;
    expect(toml).toContain('model_provider = "flotilla"');
    expect(toml).toMatch(
      /\[model_providers\.flotilla\][^[]*base_url = "http:\/\/127\.0\.0\.1:9\/v1"[^[]*wire_api = "responses"[^[]*env_key = "OPENAI_API_KEY"/,
    );
    expect(toml).toMatch(/\[mcp_servers\.flotilla\]\ncommand = "\/node"\nargs = \["cli.js","mcp"\]/);
    expect(toml).not.toContain('sk-never-in-config');
    const hooks = JSON.parse(l.files.find((f) => f.path === 'hooks.json')!.content) as {
      hooks: Record<string, unknown>;
    };
    expect(Object.keys(hooks.hooks)).toEqual(['UserPromptSubmit', 'Stop', 'PreToolUse', 'PermissionRequest']);
    expect(l.env).toEqual({ CODEX_HOME: '/c' });
    // The permissions again on the command line (they outrank a trusted folder's .codex/config.toml).
    expect(l.argv.slice(0, 6)).toEqual([
      '--no-daemon',
      '--dangerously-bypass-hook-trust',
      '--ask-for-approval',
      'never',
      '--sandbox',
      'danger-full-access',
    ]);
    expect(l.argv).toEqual(expect.arrayContaining(['--disable', 'multi_agent', '--enable', 'shell_tool']));
    // Blanket hook trust only in a folder its person trusted (folder-trust.unit.test.ts).
    expect(
      codex.launch({ ...launchInput({}), trusted: false }, { tools: ALL_TOOLS, permissionMode: 'dont_ask' }).argv,
    ).not.toContain('--dangerously-bypass-hook-trust');
    expect(l.argv.slice(-2)).toEqual(['--', 'do it']);
    expect(
      codex.launch(launchInput({}), { tools: ALL_TOOLS, permissionMode: 'dont_ask' }).files[0]!.content,
    ).not.toContain('model_provider');
  });

  it('answers "Trust this folder?" for the spawn folder and trusts exactly its own hooks, by their hash', () => {
    const l = codex.launch(launchInput({}), { tools: ALL_TOOLS, permissionMode: 'default' });
    const toml = l.files.find((f) => f.path === 'config.toml')!.content;
    expect(toml).toContain('[projects."/p"]\ntrust_level = "trusted"');
    const keys = [...toml.matchAll(/\[hooks\.state\."([^"]+)"\]\ntrusted_hash = "sha256:[0-9a-f]{64}"/g)].map(
      (m) => m[1],
    );
    expect(keys).toEqual([
      '/c/hooks.json:user_prompt_submit:0:0',
      '/c/hooks.json:stop:0:0',
      '/c/hooks.json:pre_tool_use:0:0',
      '/c/hooks.json:permission_request:0:0',
    ]);
    // The hash covers the command: a different hook command is a different trust.
    const other = codex.launch(
      { ...launchInput({}), hookCommand: (e) => `other ${e}` },
      { tools: ALL_TOOLS, permissionMode: 'default' },
    ).files[0]!.content;
    expect(other.match(/sha256:[0-9a-f]+/)![0]).not.toBe(toml.match(/sha256:[0-9a-f]+/)![0]);
  });

  it('usage is the last running total in the session file; each model response is a turn', () => {
    const line = (i: number, o: number) =>
      JSON.stringify({
        type: 'event_msg',
        payload: { type: 'token_count', info: { total_token_usage: { input_tokens: i, output_tokens: o } } },
      });
    const text = [
      line(10, 5),
      JSON.stringify({ type: 'event_msg', payload: { type: 'token_count', info: null } }),
      'not json "token_count"',
      line(30, 12),
    ].join('\n');
    expect(codex.parseUsage(text)).toEqual({ inputTokens: 30, outputTokens: 12, turns: 2 });
  });
});
