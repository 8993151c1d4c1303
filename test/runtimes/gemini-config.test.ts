import { describe, expect, it } from 'vitest';
import { compileGeminiPolicy, gemini } from '../../src/runtimes/gemini.js';
import { ALL_TOOLS, launchInput } from './launch-input.js';

describe('gemini runtime: policy and settings', () => {
  it("withheld tools and Gemini's extras are deny rules; withheld fleet tools are left out of includeTools", () => {
    const p = compileGeminiPolicy({ tools: ['read', 'send_message'], permissionMode: 'dont_ask' });
    expect(p.deny).toEqual([
      'run_shell_command',
      'write_file',
      'replace',
      'glob',
      'list_directory',
      'grep_search',
      'invoke_agent',
      'web_fetch',
      'google_web_search',
    ]);
    expect(p.fleetTools).toEqual(['send_message']);
    const l = gemini.launch(launchInput({}), { tools: ['read'], permissionMode: 'dont_ask' });
    const toml = l.files.find((f) => f.path === 'policy.toml')!.content;
    expect(toml).toContain('[[rule]]\ntoolName = "run_shell_command"\ndecision = "deny"\npriority = 999');
  });

  it.each([
    ['plan', 'plan'],
    ['default', 'default'],
    ['accept_edits', 'auto_edit'],
    ['dont_ask', 'yolo'],
    ['bypass_permissions', 'yolo'],
  ] as const)('%s → --approval-mode %s', (mode, approval) => {
    expect(compileGeminiPolicy({ tools: ALL_TOOLS, permissionMode: mode }).approvalMode).toBe(approval);
  });

  it("settings live in the agent's GEMINI_CLI_HOME: hooks in milliseconds, the fleet MCP server trusted; a key or base URL picks API-key auth", () => {
    const l = gemini.launch(launchInput({ GOOGLE_GEMINI_BASE_URL: 'http://127.0.0.1:9' }), {
      tools: ALL_TOOLS,
      permissionMode: 'dont_ask',
    });
    expect(l.env).toMatchObject({ GEMINI_CLI_HOME: '/c', GEMINI_CLI_NO_RELAUNCH: 'true', SHLVL: '1' });
    const settings = JSON.parse(l.files.find((f) => f.path === '.gemini/settings.json')!.content) as {
      hooks: Record<string, unknown[]>;
      mcpServers: { flotilla: unknown };
      security: { auth: { selectedType: string } };
    };
    expect(Object.keys(settings.hooks)).toEqual(['BeforeAgent', 'AfterAgent', 'BeforeTool', 'Notification']);
    expect(settings.hooks.BeforeTool![0]).toMatchObject({ matcher: '.*', hooks: [{ timeout: 60_000 }] });
    expect(settings.mcpServers.flotilla).toMatchObject({ command: '/node', trust: true });
    expect(settings.security.auth.selectedType).toBe('gemini-api-key');
    expect(l.argv).toEqual(
      expect.arrayContaining([
        '--approval-mode',
        'yolo',
        '--allowed-mcp-server-names',
        'flotilla',
        '--prompt-interactive',
        'do it',
      ]),
    );
  });

  it('usage sums each model message once; the hook protocol reads prompt_response and answers deny for a tool', () => {
    const text = [
      JSON.stringify({ id: 'a', type: 'gemini', tokens: { input: 10, output: 5 } }),
      JSON.stringify({ id: 'u', type: 'user', content: [{ text: 'hi' }] }),
      JSON.stringify({ id: 'b', type: 'gemini', tokens: { input: 20, output: 7 } }),
    ].join('\n');
    expect(gemini.parseUsage(text)).toEqual({ inputTokens: 30, outputTokens: 12, turns: 2 });
    expect(gemini.finalAnswer({ prompt_response: 'done' })).toBe('done');
    expect(JSON.parse(gemini.denyTool('no').stdout)).toEqual({ decision: 'deny', reason: 'no' });
  });
});
