import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { vendorReadDecision } from '../../src/harness/cli-host/read-scope.js';
import { layoutFor } from '../../src/layout/layout.js';
import { PERMISSION_MODES, type PermissionMode } from '../../src/policy/permission-mode.js';
import { claude } from '../../src/runtimes/claude.js';
import { codex } from '../../src/runtimes/codex.js';
import { gemini } from '../../src/runtimes/gemini.js';
import type { Runtime } from '../../src/runtimes/types.js';

/**
 * The read scope in a vendor CLI's pre-tool hook (docs/security.md, "What reads may touch"):
 * each CLI's own pre-tool payload, parsed by its runtime's hook protocol, decided like the
 * harness's read, glob and grep, and answered in the CLI's own words (deny, or ask its person).
 */
let base: string;
let home: string;
let project: string;
let elsewhere: string;

beforeEach(() => {
  base = mkdtempSync(join(tmpdir(), 'flotilla-vendor-read-'));
  home = join(base, 'home');
  project = join(base, 'project');
  elsewhere = join(base, 'elsewhere');
  for (const d of [join(home, '.ssh'), project, elsewhere, join(base, 'common')]) mkdirSync(d, { recursive: true });
  writeFileSync(join(home, '.ssh', 'id_ed25519'), 'FAKE KEY\n');
  symlinkSync(join(home, '.ssh'), join(project, 'keys'));
});
afterEach(() => rmSync(base, { recursive: true, force: true }));

function decide(
  runtime: Runtime,
  toolName: string,
  toolInput: Record<string, unknown>,
  mode: PermissionMode,
  readDirs: string[] = [],
) {
  const call = runtime.toolCall({
    hook_event_name: 'PreToolUse',
    tool_name: toolName,
    tool_input: toolInput,
    cwd: project,
  });
  if (!call) throw new Error(`no call parsed from ${toolName}`);
  const layout = layoutFor(join(project, '.flotilla'), project);
  return vendorReadDecision(
    call,
    { cwd: project, permissionMode: mode },
    layout,
    { permissions: { read_dirs: readDirs }, security: { hidden_paths: [] } },
    { HOME: home },
    runtime.name,
  );
}

/**
 * Each CLI's read tools as its model calls them: [tool name, input reaching outside, input reaching ~/.ssh through the
 * project's link].
 */
const CALLS: [Runtime, string, Record<string, unknown>, Record<string, unknown>][] = [
  [claude, 'Read', { file_path: '../elsewhere/notes.txt' }, { file_path: 'keys/id_ed25519' }],
  [claude, 'Glob', { pattern: '*.txt', path: '../elsewhere' }, { pattern: 'keys/*' }],
  [claude, 'Grep', { pattern: 'x', path: '../elsewhere' }, { pattern: 'KEY', path: '~/.ssh' }],
  [gemini, 'read_file', { file_path: '../elsewhere/notes.txt' }, { absolute_path: '~/.ssh/id_ed25519' }],
  [gemini, 'read_many_files', { paths: ['README.md', '../elsewhere/*.txt'] }, { paths: ['keys/**'] }],
  [gemini, 'glob', { pattern: '*.txt', dir_path: '../elsewhere' }, { pattern: '**/*', dir_path: 'keys' }],
  [gemini, 'list_directory', { dir_path: '../elsewhere' }, { dir_path: '~/.ssh' }],
  [gemini, 'grep_search', { pattern: 'x', dir_path: '../elsewhere' }, { pattern: 'KEY', path: 'keys' }],
];

describe("read scope in the vendor CLIs' hooks", () => {
  it.each(CALLS.map(([r, t, out, cred]) => [`${r.name} ${t}`, r, t, out, cred] as const))(
    '%s: outside asks (default, plan, accept_edits), is refused (dont_ask); credentials are refused but in bypass',
    (_, runtime, tool, outside, cred) => {
      const want: Record<PermissionMode, string> = {
        plan: 'ask',
        default: 'ask',
        accept_edits: 'ask',
        dont_ask: 'deny',
        bypass_permissions: 'allow',
      };
      for (const mode of PERMISSION_MODES) {
        expect({ mode, ...decide(runtime, tool, outside, mode) }).toMatchObject({ mode, decision: want[mode] });
        expect({ mode, ...decide(runtime, tool, cred, mode) }).toMatchObject(
          mode === 'bypass_permissions'
            ? { mode, decision: 'allow' }
            : { mode, decision: 'deny', rule: 'read-scope:credentials' },
        );
      }
    },
  );

  it("another CLI's login is a credential to a CLI's read tools, its own is not", () => {
    expect(decide(claude, 'Read', { file_path: '~/.gemini/oauth_creds.json' }, 'accept_edits')).toMatchObject({
      decision: 'deny',
      rule: 'read-scope:credentials',
    });
    expect(decide(gemini, 'read_file', { file_path: '~/.claude.json' }, 'accept_edits')).toMatchObject({
      decision: 'deny',
      rule: 'read-scope:credentials',
    });
    // Its own folder is outside the project like any other: asked, not refused.
    expect(decide(claude, 'Read', { file_path: '~/.claude/CLAUDE.md' }, 'accept_edits')).toMatchObject({
      decision: 'ask',
      rule: 'read-scope:outside',
    });
    expect(decide(gemini, 'read_file', { file_path: '~/.gemini/GEMINI.md' }, 'accept_edits')).toMatchObject({
      decision: 'ask',
      rule: 'read-scope:outside',
    });
  });

  it('the project and permissions.read_dirs read without asking, in dont_ask too', () => {
    expect(decide(claude, 'Read', { file_path: join(project, 'README.md') }, 'dont_ask')).toEqual({
      decision: 'allow',
    });
    expect(decide(gemini, 'grep_search', { pattern: 'x' }, 'dont_ask')).toEqual({ decision: 'allow' });
    expect(decide(claude, 'Grep', { pattern: 'x', path: join(base, 'common') }, 'dont_ask', ['../common'])).toEqual({
      decision: 'allow',
    });
  });

  it('other tools are not its business: shell, writes, fleet tools', () => {
    expect(decide(claude, 'Bash', { command: 'cat ~/.ssh/id_ed25519' }, 'dont_ask')).toBeUndefined();
    expect(decide(gemini, 'write_file', { file_path: '/etc/x', content: '' }, 'dont_ask')).toBeUndefined();
    expect(decide(claude, 'mcp__flotilla__list_agents', {}, 'dont_ask')).toBeUndefined();
    // Codex reads through its shell: its hooks never see a read tool.
    expect(decide(codex, 'Bash', { command: 'cat ~/.ssh/id_ed25519' }, 'dont_ask')).toBeUndefined();
  });

  it('each CLI is told in its own protocol: Claude and Codex read permissionDecision, Gemini a top-level decision', () => {
    expect(JSON.parse(claude.askTool('why').stdout)).toEqual({
      hookSpecificOutput: { hookEventName: 'PreToolUse', permissionDecision: 'ask', permissionDecisionReason: 'why' },
    });
    expect(JSON.parse(codex.askTool('why').stdout)).toMatchObject({
      hookSpecificOutput: { permissionDecision: 'ask' },
    });
    expect(JSON.parse(gemini.askTool('why').stdout)).toMatchObject({ decision: 'ask', reason: 'why' });
    expect(JSON.parse(gemini.denyTool('why').stdout)).toMatchObject({ decision: 'deny', reason: 'why' });
  });
});
