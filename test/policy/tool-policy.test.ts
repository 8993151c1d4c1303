import { describe, expect, it } from 'vitest';
import {
  checkToolCall,
  effectivePolicy,
  resolveTools,
  withheldRules,
  type ToolsSpec,
} from '../../src/policy/tool-policy.js';
import { CANONICAL_TOOLS, canonicalToolName } from '../../src/policy/tool-names.js';

const spec = (s: Partial<ToolsSpec>): ToolsSpec => ({ allow: null, deny: [], except: [], ...s });
const ALL = [...CANONICAL_TOOLS];
const without = (...t: string[]) => ALL.filter((x) => !t.includes(x));

describe('canonical tool names', () => {
  it.each([
    ['Bash', 'shell'],
    ['bash', 'shell'],
    ['BASH', 'shell'],
    ['Bash(cargo *)', 'shell'],
    [' Read ', 'read'],
    ['MultiEdit', 'edit'],
    ['LS', 'glob'],
    ['Task', 'spawn_agent'],
    ['shell', 'shell'],
    ['send_message', 'send_message'],
    ['WebFetch', 'webfetch'],
    ['NotebookEdit', 'notebookedit'],
    ['mcp__github__create_issue', 'mcp__github__create_issue'],
  ])('%s → %s', (name, id) => expect(canonicalToolName(name)).toBe(id));
});

describe('effective tools', () => {
  it.each<[string, Partial<ToolsSpec>, string[], string[]]>([
    ['no tools field: everything', {}, [], ALL],
    ['allow list of Claude names', { allow: ['Read', 'Grep', 'Glob'] }, [], ['read', 'glob', 'grep']],
    ['allow with an argument pattern grants the tool', { allow: ['Bash(cargo *)', 'read'] }, [], ['shell', 'read']],
    ['allow minus except', { allow: ['shell', 'read', 'write'], except: ['write'] }, [], ['shell', 'read']],
    ['deny list', { deny: ['shell', 'Write'] }, [], without('shell', 'write')],
    ['deny plus except', { deny: ['shell'], except: ['spawn_agent'] }, [], without('shell', 'spawn_agent')],
    ['default_disallowed removes from an allow list', { allow: ['shell', 'read'] }, ['Bash'], ['read']],
    [
      'default_disallowed removes from all',
      {},
      ['spawn_agent', 'cancel_agent'],
      without('spawn_agent', 'cancel_agent'),
    ],
    ['case-insensitive deny', { deny: ['SHELL', 'read'] }, [], without('shell', 'read')],
    ['empty allow list: no tools', { allow: [] }, [], []],
    ['unknown names in an allow list add nothing', { allow: ['WebSearch', 'Read'] }, [], ['read']],
    ['deny wins over except and allow', { allow: ['read'], deny: ['read'] }, [], []],
  ])('%s', (_what, s, disallowed, want) => {
    expect(resolveTools(spec(s), disallowed).tools).toEqual(want);
  });
});

describe('checkToolCall', () => {
  const policy = resolveTools(spec({ allow: ['Read', 'Bash', 'Write'], except: ['write'] }), ['shell']);

  it.each([
    ['read', 'allow', 'tools'],
    ['Read', 'allow', 'tools'],
    ['shell', 'deny', 'agents.default_disallowed_tools'],
    ['Bash(ls)', 'deny', 'agents.default_disallowed_tools'],
    ['write', 'deny', 'tools.except'],
    ['edit', 'deny', 'tools.allow'],
    ['WebFetch', 'deny', 'unknown-tool'],
  ])('%s → %s (%s)', (tool, decision, rule) => {
    expect(checkToolCall(policy, tool)).toEqual({ decision, rule });
  });

  it('names the deny list', () => {
    expect(checkToolCall(resolveTools(spec({ deny: ['edit'] })), 'Edit')).toEqual({
      decision: 'deny',
      rule: 'tools.deny',
    });
  });

  it('builds a whole policy for the registry', () => {
    const p = effectivePolicy({ tools: spec({ allow: ['read'] }), permissionMode: 'plan', secrets: ['GH_TOKEN'] });
    // Listing keys implies request_secret under an allow list that does not name it (§11).
    expect(p).toMatchObject({ tools: ['read', 'request_secret'], permissionMode: 'plan', secrets: ['GH_TOKEN'] });
    expect(p.withheld.request_secret).toBeUndefined();
    expect(JSON.parse(JSON.stringify(p))).toEqual(p);
  });

  it('request_secret stays withheld without keys, and when a deny list names it', () => {
    expect(effectivePolicy({ tools: spec({ allow: ['read'] }), permissionMode: 'plan', secrets: [] }).tools).toEqual([
      'read',
    ]);
    const denied = effectivePolicy({
      tools: spec({ allow: ['read'], except: ['request_secret'] }),
      permissionMode: 'plan',
      secrets: ['github-token'],
    });
    expect(denied.tools).toEqual(['read']);
    expect(denied.withheld.request_secret).toBe('tools.except');
  });
});

describe('withheldRules', () => {
  it('names the definition list that withheld a tool, or the parent that narrowed it', () => {
    const spec = { allow: null, deny: ['write'], except: ['edit'] };
    const withheld = withheldRules(spec, ['grep'], ['read', 'glob', 'shell']);
    const policy = { tools: ['read', 'glob', 'shell'], withheld };
    expect(checkToolCall(policy, 'Write')).toEqual({ decision: 'deny', rule: 'tools.deny' });
    expect(checkToolCall(policy, 'edit')).toEqual({ decision: 'deny', rule: 'tools.except' });
    expect(checkToolCall(policy, 'grep')).toEqual({ decision: 'deny', rule: 'agents.default_disallowed_tools' });
    expect(checkToolCall(policy, 'spawn_agent')).toEqual({ decision: 'deny', rule: 'parent' });
    expect(checkToolCall(policy, 'WebSearch')).toEqual({ decision: 'deny', rule: 'unknown-tool' });
    expect(checkToolCall(policy, 'Bash(ls)')).toEqual({ decision: 'allow', rule: 'tools' });
  });
});
