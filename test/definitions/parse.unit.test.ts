import { describe, expect, it } from 'vitest';
import { defaultConfig } from '../../src/config/schema.js';
import { parseDefinition } from '../../src/definitions/parse.js';
import type { DefinitionScope } from '../../src/definitions/types.js';

const P = '/p/.flotilla/agents/x.md';
const config = defaultConfig();
const withBypass = { ...config, agents: { ...config.agents, allow_bypass_permissions: true } };

function parse(text: string, scope: DefinitionScope = 'project', cfg = config) {
  return parseDefinition(text, { path: P, scope, config: cfg });
}
const doc = (front: string, body = 'You review code.') => `---\n${front}\n---\n\n${body}\n`;
const ok = (front: string, body?: string) => {
  const r = parse(doc(front, body));
  expect(r.errors).toEqual([]);
  return r.definition!;
};
/** The one error of a file, as the exact message. */
const errorOf = (text: string, cfg = config) => {
  const r = parse(text, 'project', cfg);
  expect(r.definition).toBeUndefined();
  expect(r.errors).toHaveLength(1);
  return r.errors[0]!;
};

describe('fields and defaults', () => {
  it('reads a minimal file with every default', () => {
    const d = ok('name: reviewer\ndescription: Reviews diffs');
    expect(d).toEqual({
      name: 'reviewer',
      description: 'Reviews diffs',
      background: false,
      maxTurns: 20,
      tools: { allow: null, deny: [], except: [] },
      permissionMode: 'default',
      secrets: [],
      timeoutSecs: 600,
      ttlSecs: 300,
      skills: { include: [], exclude: [] },
      hooks: { PreToolUse: [], PostToolUse: [] },
      body: 'You review code.',
      declared: { tools: false, permissionMode: false, maxTurns: false, timeoutSecs: false },
      source: { path: P, scope: 'project' },
    });
  });

  it('reads every field', () => {
    const d = ok(`name: deployer
description: Ships releases
model: opus
background: true
max_turns: 7
memory: project
tools: {allow: [shell, read], except: [read]}
permissions:
  permission_mode: accept_edits
  secrets: [NPM_TOKEN]
  timeout_secs: 120
  ttl_secs: 60
skills: {include: ['release/*'], exclude: ['release/old']}
hooks:
  PreToolUse:
    - matcher: Edit|Write
      hooks:
        - {type: command, command: npm run lint, timeout_secs: 5, fail_closed: true}
color: red`);
    expect(d).toMatchObject({
      model: 'opus',
      background: true,
      maxTurns: 7,
      memory: 'project',
      tools: { allow: ['shell', 'read'], deny: [], except: ['read'] },
      permissionMode: 'accept_edits',
      secrets: ['NPM_TOKEN'],
      timeoutSecs: 120,
      ttlSecs: 60,
      skills: { include: ['release/*'], exclude: ['release/old'] },
      hooks: {
        PreToolUse: [
          {
            matcher: 'Edit|Write',
            hooks: [{ type: 'command', command: 'npm run lint', timeout_secs: 5, fail_closed: true }],
          },
        ],
        PostToolUse: [],
      },
      color: 'red',
      declared: { tools: true, permissionMode: true, maxTurns: true, timeoutSecs: true },
    });
  });

  it('takes defaults from config', () => {
    const cfg = {
      ...config,
      limits: { ...config.limits, max_turns: 9, timeout_secs: 30 },
      agents: { ...config.agents, default_permission_mode: 'plan' as const, default_memory_scope: 'local' as const },
    };
    const d = parse(doc('name: a\ndescription: b'), 'project', cfg).definition!;
    expect(d).toMatchObject({ maxTurns: 9, timeoutSecs: 30, permissionMode: 'plan', memory: 'local' });
  });

  it.each([
    ['Read, Grep, Glob', ['Read', 'Grep', 'Glob']],
    ['[Read, Bash]', ['Read', 'Bash']],
    ['Read, Bash(git diff:*, git log:*)', ['Read', 'Bash(git diff:*, git log:*)']],
  ])('Claude-style tools %j is an allow list', (tools, allow) => {
    expect(ok(`name: a\ndescription: b\ntools: ${tools}`).tools).toEqual({ allow, deny: [], except: [] });
  });

  it('reads a deny list with except and Claude disallowedTools', () => {
    expect(ok('name: a\ndescription: b\ntools: {deny: [shell], except: [spawn_agent]}').tools).toEqual({
      allow: null,
      deny: ['shell'],
      except: ['spawn_agent'],
    });
    expect(ok('name: a\ndescription: b\ndisallowedTools: Bash').tools).toEqual({
      allow: null,
      deny: ['Bash'],
      except: [],
    });
    expect(ok('name: a\ndescription: b\ntools: Read, Bash\ndisallowedTools: Bash').tools).toEqual({
      allow: ['Read', 'Bash'],
      deny: [],
      except: ['Bash'],
    });
  });

  it.each([
    ['permissionMode: acceptEdits', 'accept_edits'],
    ['permissionMode: dontAsk', 'dont_ask'],
    ['permissionMode: plan', 'plan'],
    ['permission_mode: accept_edits', 'accept_edits'],
    ['permissions: {permissionMode: dontAsk}', 'dont_ask'],
    ['permissions: {permission_mode: default}', 'default'],
  ])('permission mode %j', (line, mode) => {
    expect(ok(`name: a\ndescription: b\n${line}`).permissionMode).toBe(mode);
  });

  it('keeps model strings as written, including inherit', () => {
    expect(ok('name: a\ndescription: b\nmodel: inherit').model).toBe('inherit');
    expect(ok('name: a\ndescription: b\nmodel: ollama:llama3.1').model).toBe('ollama:llama3.1');
  });

  it('strips a BOM and CRLF line ends', () => {
    expect(parse('\uFEFF---\r\nname: a\r\ndescription: b\r\n---\r\nBody\r\n').definition?.body).toBe('Body');
  });
});

describe('errors: exact text', () => {
  it.each<[string, string, string]>([
    [
      'missing name',
      doc('description: b'),
      "missing required field 'name' (name) — add it to the frontmatter, e.g. name: x",
    ],
    [
      'invalid name',
      doc("name: 'My Agent!'\ndescription: b"),
      "name 'My Agent!' is not valid (name) — use 1-64 letters, digits, '_' or '-', starting with a letter or digit, e.g. name: my-agent",
    ],
    [
      'name too long',
      doc(`name: ${'a'.repeat(65)}\ndescription: b`),
      `name '${'a'.repeat(65)}' is not valid (name) — use 1-64 letters, digits, '_' or '-', starting with a letter or digit, e.g. name: ${'a'.repeat(64)}`,
    ],
    [
      'missing description',
      doc('name: a'),
      "missing required field 'description' (description) — say what the agent does and when to use it, e.g. description: Reviews code changes for bugs; use after every edit",
    ],
    [
      'description not text',
      doc('name: a\ndescription: [1, 2]'),
      'description must be text, got a list (description) — quote it, e.g. description: "Reviews code changes for bugs"',
    ],
    [
      'empty model',
      doc("name: a\ndescription: b\nmodel: ''"),
      "model must be a model name such as sonnet, inherit or anthropic:claude-sonnet-4-5, got '' (model) — e.g. model: sonnet",
    ],
    [
      'background',
      doc('name: a\ndescription: b\nbackground: yes'),
      "background must be true or false, got 'yes' (background) — e.g. background: true",
    ],
    [
      'max_turns',
      doc('name: a\ndescription: b\nmax_turns: 0'),
      'max_turns must be a whole number of at least 1, got 0 (number) (max_turns) — e.g. max_turns: 20',
    ],
    [
      'memory',
      doc('name: a\ndescription: b\nmemory: global'),
      "memory must be user, project or local, got 'global' (memory) — e.g. memory: project",
    ],
    [
      'allow and deny',
      doc('name: a\ndescription: b\ntools: {allow: [read], deny: [shell]}'),
      "tools has both 'allow' and 'deny' (tools) — use one: an allow list, or a deny list with optional except, e.g. tools: {deny: [shell], except: [spawn_agent]}",
    ],
    [
      'tools shape',
      doc('name: a\ndescription: b\ntools: 42'),
      'tools must be a comma-separated string, a list, or {allow: [...]} / {deny: [...]} with optional except, got 42 (number) (tools) — e.g. tools: Read, Grep, Glob',
    ],
    [
      'permission mode',
      doc('name: a\ndescription: b\npermissionMode: yolo'),
      "permission_mode 'yolo' is not a mode (permissions.permission_mode) — use one of plan, default, accept_edits, dont_ask, bypass_permissions (Claude's acceptEdits, dontAsk, bypassPermissions also work), e.g. permissions: {permission_mode: accept_edits}",
    ],
    [
      'bypass refused',
      doc('name: a\ndescription: b\npermissionMode: bypassPermissions'),
      'permission_mode bypass_permissions is refused by config (permissions.permission_mode) — set agents.allow_bypass_permissions: true in .flotilla/config.yaml, or use a mode that keeps approvals, e.g. permissions: {permission_mode: accept_edits}',
    ],
    [
      'secrets',
      doc('name: a\ndescription: b\npermissions: {secrets: [my token]}'),
      "permissions.secrets must be a list of secret key names (1-64 letters, digits, '_', '.' or '-', starting with a letter or digit), got a list (permissions.secrets) — e.g. secrets: [github-token, npm-token]",
    ],
    [
      'timeout',
      doc('name: a\ndescription: b\npermissions: {timeout_secs: -1}'),
      'permissions.timeout_secs must be a number of seconds > 0, got -1 (number) (permissions.timeout_secs) — e.g. timeout_secs: 600',
    ],
    [
      'ttl',
      doc('name: a\ndescription: b\npermissions: {ttl_secs: soon}'),
      "permissions.ttl_secs must be a number of seconds > 0, got 'soon' (permissions.ttl_secs) — e.g. ttl_secs: 300",
    ],
    [
      'permissions shape',
      doc('name: a\ndescription: b\npermissions: plan'),
      "permissions must be a mapping, got 'plan' (permissions) — e.g. permissions: {permission_mode: accept_edits, secrets: [github-token]}",
    ],
    [
      'skills',
      doc('name: a\ndescription: b\nskills: 3'),
      "skills must be {include: [globs], exclude: [globs]}, got 3 (number) (skills) — e.g. skills: {include: ['testing/*'], exclude: ['testing/legacy']}",
    ],
    [
      'hooks shape',
      doc('name: a\ndescription: b\nhooks: {PreToolUse: {matcher: Edit}}'),
      "hooks.PreToolUse must be a list of {matcher, hooks}, got a mapping (hooks.PreToolUse) — e.g. hooks: {PreToolUse: [{matcher: 'Edit|Write', hooks: [{type: command, command: 'npm run lint'}]}]}",
    ],
    [
      'hook command',
      doc('name: a\ndescription: b\nhooks: {PostToolUse: [{matcher: Bash, hooks: [{type: command}]}]}'),
      "hooks.PostToolUse[0].hooks[0].command must be a shell command, got undefined (undefined) (hooks.PostToolUse[0].hooks[0].command) — e.g. hooks: {PreToolUse: [{matcher: 'Edit|Write', hooks: [{type: command, command: 'npm run lint'}]}]}",
    ],
    [
      'color',
      doc('name: a\ndescription: b\ncolor: 7'),
      'color must be a color name, got 7 (number) (color) — e.g. color: blue',
    ],
    [
      'no frontmatter',
      'You are a reviewer.\n',
      "no frontmatter: the file must start with a '---' line (frontmatter) — put the fields first, e.g. '---' / 'name: reviewer' / 'description: Reviews diffs for bugs' / '---' then the prompt",
    ],
    [
      'unclosed frontmatter',
      '---\nname: a\ndescription: b\n',
      "frontmatter has no closing '---' line (frontmatter) — end the fields with a '---' line, e.g. '---' / 'name: reviewer' / 'description: Reviews diffs for bugs' / '---'",
    ],
    [
      'frontmatter not a mapping',
      doc('- a\n- b'),
      "frontmatter must be a set of 'key: value' fields, got a list (frontmatter) — e.g. '---' / 'name: reviewer' / 'description: Reviews diffs for bugs' / '---'",
    ],
    [
      'NUL bytes',
      doc('name: a\ndescription: b', 'bad\0body'),
      'file contains NUL bytes (file) — save it as plain UTF-8 text, e.g. re-save it from your editor as Markdown',
    ],
    [
      'bad TOML',
      '+++\nname = \n+++\nbody\n',
      "frontmatter is not valid TOML: Invalid TOML document: invalid value (frontmatter) — fix the syntax or switch to '---' YAML, e.g. '---' / 'name: reviewer' / 'description: Reviews diffs for bugs' / '---'",
    ],
  ])('%s', (_what, text, message) => {
    const e = errorOf(text);
    expect(e.message).toBe(message);
    expect(e.path).toBe(P);
    expect(message).toContain(`(${e.field})`);
  });

  it('reports every bad field of a file at once', () => {
    const r = parse(doc('name: a b\nmax_turns: x'));
    expect(r.errors.map((e) => e.field)).toEqual(['name', 'description', 'max_turns']);
  });
});

describe('warnings: the file still loads', () => {
  const warnings = (text: string, scope: DefinitionScope = 'project', cfg = config) => {
    const r = parse(text, scope, cfg);
    expect(r.errors).toEqual([]);
    expect(r.definition).toBeDefined();
    return r.warnings.map((w) => w.message);
  };

  it('unknown keys', () => {
    expect(warnings(doc('name: a\ndescription: b\nmcpServers: [x]'))).toEqual([
      "unknown field 'mcpServers' is ignored (mcpServers) — check the spelling; known fields: name, description, model, background, max_turns, memory, tools, permissions, skills, hooks, schedule, color, runtime, auto_claim, board, host",
    ]);
  });

  it('tools that do not exist here', () => {
    expect(warnings(doc('name: a\ndescription: b\ntools: Read, WebSearch, mcp__github__create_issue'))).toEqual([
      "tool 'WebSearch' is not available here and is ignored (tools) — available tools: shell, read, write, edit, glob, grep, send_message, check_inbox, spawn_agent, list_agents, wait_for_agents, cancel_agent, merge_work, lease_paths, task_create, task_list, task_claim, task_update, wait_for_tasks, request_secret",
      "tool 'mcp__github__create_issue' is not available here and is ignored (tools) — available tools: shell, read, write, edit, glob, grep, send_message, check_inbox, spawn_agent, list_agents, wait_for_agents, cancel_agent, merge_work, lease_paths, task_create, task_list, task_claim, task_update, wait_for_tasks, request_secret",
    ]);
  });

  it('argument patterns that are not enforced', () => {
    expect(warnings(doc('name: a\ndescription: b\ntools: Bash(cargo *)'))).toEqual([
      "'Bash(cargo *)' grants the whole 'shell' tool: argument patterns are not enforced (tools) — forbid commands with security.deny_commands, e.g. deny_commands: ['cargo publish']",
    ]);
  });

  it('TOML frontmatter is deprecated but loads', () => {
    const text = '+++\nname = "a"\ndescription = "b"\nmax_turns = 3\n+++\nBody\n';
    expect(warnings(text)).toEqual([
      "'+++' TOML frontmatter is deprecated (frontmatter) — rewrite it as '---' YAML, e.g. '---' / 'name: reviewer' / 'description: Reviews diffs for bugs' / '---'",
    ]);
    expect(parse(text).definition).toMatchObject({ name: 'a', description: 'b', maxTurns: 3, body: 'Body' });
  });

  it('not-strict YAML is read leniently', () => {
    const text = doc("name: a\ndescription: Use when: 'x', or: y\ntools: Read, Grep\nmodel: sonnet");
    expect(warnings(text)).toEqual([
      `frontmatter is not strict YAML (Nested mappings are not allowed in compact mappings at line 2, column 14); read 'description' as plain text (frontmatter) — quote such values to silence this, e.g. description: "Use when: …"`,
    ]);
    expect(parse(text).definition).toMatchObject({
      name: 'a',
      description: "Use when: 'x', or: y",
      tools: { allow: ['Read', 'Grep'] },
      model: 'sonnet',
    });
  });

  it('lenient reading keeps nested fields of a broken file', () => {
    const text = doc('name: a\ndescription: Triggers on: x\ntools:\n  deny: [shell]\nmax_turns: 4');
    expect(parse(text).definition).toMatchObject({
      description: 'Triggers on: x',
      tools: { deny: ['shell'] },
      maxTurns: 4,
    });
  });

  it('hooks are stripped from user-level files', () => {
    const text = doc('name: a\ndescription: b\nhooks: {PreToolUse: [{matcher: Bash, hooks: [{command: "echo hi"}]}]}');
    for (const scope of ['user', 'claude-user'] as const) {
      expect(warnings(text, scope)).toEqual([
        "hooks in user-level definitions are ignored (hooks) — put the definition in the project's .flotilla/agents/ to use hooks there",
      ]);
      expect(parse(text, scope).definition!.hooks).toEqual({ PreToolUse: [], PostToolUse: [] });
    }
    expect(parse(text, 'project').definition!.hooks.PreToolUse).toHaveLength(1);
    expect(parse(text, 'claude-project').definition!.hooks.PreToolUse).toHaveLength(1);
  });

  it('bypass_permissions loads with a warning when config allows it', () => {
    expect(warnings(doc('name: a\ndescription: b\npermissionMode: bypassPermissions'), 'project', withBypass)).toEqual([
      'permission_mode bypass_permissions runs every tool call without asking (permissions.permission_mode) — allowed by agents.allow_bypass_permissions; prefer accept_edits, e.g. permissions: {permission_mode: accept_edits}',
    ]);
  });

  it('names with dots, as Claude Code allows', () => {
    expect(warnings(doc('name: powershell-5.1-expert\ndescription: b'))).toEqual([
      "name 'powershell-5.1-expert' contains '.', accepted for Claude compatibility; agent ids made from it use '-' instead (name) — prefer e.g. name: powershell-5-1-expert",
    ]);
    expect(parse(doc('name: a..b\ndescription: b')).errors[0]?.field).toBe('name');
    expect(parse(doc('name: .hidden\ndescription: b')).errors[0]?.field).toBe('name');
  });

  it('an empty prompt', () => {
    expect(warnings(doc('name: a\ndescription: b', ''))).toEqual([
      'the prompt (the Markdown after the frontmatter) is empty (body) — write the instructions below the closing ---, e.g. "You review diffs for bugs."',
    ]);
  });

  it('unsupported hook events', () => {
    expect(warnings(doc('name: a\ndescription: b\nhooks: {Stop: []}'))).toEqual([
      "hook event 'Stop' is not supported and is ignored (hooks) — definitions take PreToolUse and PostToolUse; use config hooks.start / hooks.stop for lifecycle hooks",
    ]);
  });
});
