import { describe, expect, it } from 'vitest';
import { decideToolCall, type CallFacts } from '../../src/policy/decide.js';
import type { PermissionMode } from '../../src/policy/permission-mode.js';
import { createMergeWorkTool } from '../../src/tools/merge-work.js';

const policy = { tools: ['shell', 'read'], withheld: { write: 'tools.deny' as const } };
const facts = (over: Partial<CallFacts>): CallFacts => ({
  tool: 'shell',
  toolClass: 'exec',
  policy,
  mode: 'default',
  canAsk: true,
  ...over,
});
const deny = { verdict: 'deny' as const, rule: 'sudo', command: 'sudo ls' };
const opaque = { verdict: 'opaque' as const, reason: 'eval runs text built by an expansion' };
const plain = { verdict: 'plain' as const };

describe('decideToolCall: deny list → tool policy → permission mode', () => {
  it.each<PermissionMode>(['plan', 'default', 'accept_edits', 'dont_ask', 'bypass_permissions'])(
    'a denied command is refused in %s mode before anyone is asked',
    (mode) => {
      for (const canAsk of [true, false])
        expect(decideToolCall(facts({ mode, canAsk, shell: deny }))).toMatchObject({
          decision: 'deny',
          rule: 'deny_commands:sudo',
        });
    },
  );

  it('the deny list comes before the tool policy; the tool policy before the mode', () => {
    expect(decideToolCall(facts({ tool: 'shell', policy: { tools: [], withheld: {} }, shell: deny })).rule).toBe(
      'deny_commands:sudo',
    );
    expect(decideToolCall(facts({ tool: 'write', toolClass: 'write', mode: 'dont_ask' }))).toMatchObject({
      decision: 'deny',
      rule: 'tools.deny',
    });
    expect(decideToolCall(facts({ tool: 'nope', toolClass: undefined }))).toMatchObject({
      decision: 'deny',
      rule: 'unknown-tool',
    });
  });

  it.each<[PermissionMode, boolean, string, string]>([
    ['plan', true, 'deny', 'plan'],
    ['default', true, 'ask', 'default'],
    ['accept_edits', true, 'ask', 'accept_edits'],
    ['dont_ask', true, 'allow', 'dont_ask'],
    ['bypass_permissions', true, 'allow', 'bypass_permissions'],
    ['default', false, 'deny', 'no-approver'],
    ['dont_ask', false, 'allow', 'dont_ask'],
  ])('opaque in %s (can ask: %s) → %s (%s)', (mode, canAsk, decision, rule) => {
    const d = decideToolCall(facts({ mode, canAsk, shell: opaque }));
    expect(d).toMatchObject({ decision, rule, opaque: true });
    if (decision === 'deny' && rule === 'no-approver')
      expect(d.reason).toMatch(/cannot tell statically what it runs \(eval runs text built by an expansion\)/);
  });

  it('security.opaque_commands overrides the mode', () => {
    expect(decideToolCall(facts({ mode: 'dont_ask', shell: opaque, opaqueCommands: 'ask' }))).toMatchObject({
      decision: 'ask',
      rule: 'opaque_commands',
    });
    expect(
      decideToolCall(facts({ mode: 'dont_ask', canAsk: false, shell: opaque, opaqueCommands: 'ask' })),
    ).toMatchObject({ decision: 'deny', rule: 'no-approver' });
    expect(decideToolCall(facts({ mode: 'dont_ask', shell: opaque, opaqueCommands: 'deny' }))).toMatchObject({
      decision: 'deny',
      rule: 'opaque_commands',
    });
    expect(decideToolCall(facts({ mode: 'default', shell: opaque, opaqueCommands: 'allow' }))).toMatchObject({
      decision: 'ask',
      rule: 'default',
    });
    expect(decideToolCall(facts({ mode: 'dont_ask', shell: opaque, opaqueCommands: 'allow' }))).toMatchObject({
      decision: 'allow',
      rule: 'dont_ask',
    });
    expect(decideToolCall(facts({ mode: 'plan', shell: opaque, opaqueCommands: 'allow' }))).toMatchObject({
      decision: 'deny',
      rule: 'plan',
    });
  });

  it('plain commands follow the mode', () => {
    expect(decideToolCall(facts({ shell: plain })).decision).toBe('ask');
    expect(decideToolCall(facts({ shell: plain, mode: 'dont_ask' }))).toEqual({
      decision: 'allow',
      rule: 'dont_ask',
      opaque: false,
    });
    expect(decideToolCall(facts({ shell: plain, canAsk: false }))).toMatchObject({
      decision: 'deny',
      rule: 'no-approver',
    });
    expect(decideToolCall(facts({ tool: 'read', toolClass: 'read' }))).toEqual({
      decision: 'allow',
      rule: 'default',
      opaque: false,
    });
  });

  it("merge_work asks in default mode: it can move the person's checked-out branch", () => {
    const { klass } = createMergeWorkTool({ merge: () => Promise.reject(new Error('not called')) });
    const lead = (over: Partial<CallFacts>) =>
      decideToolCall(
        facts({ tool: 'merge_work', toolClass: klass, policy: { tools: ['merge_work'], withheld: {} }, ...over }),
      );
    expect(lead({ mode: 'default' })).toMatchObject({ decision: 'ask', rule: 'default' });
    expect(lead({ mode: 'default', canAsk: false })).toMatchObject({ decision: 'deny', rule: 'no-approver' });
    expect(lead({ mode: 'accept_edits' }).decision).toBe('allow');
    expect(lead({ mode: 'dont_ask' }).decision).toBe('allow');
  });
});
