import { describe, expect, it } from 'vitest';
import { checkEscalation, fitToParent, type ChildPolicy, type ParentPolicy } from '../../src/policy/escalation.js';

const parent: ParentPolicy = {
  id: 'lead-3kd9p1',
  tools: ['read', 'grep', 'spawn_agent'],
  permissionMode: 'accept_edits',
  secrets: ['GH_TOKEN'],
};
const child = (c: Partial<ChildPolicy> = {}): ChildPolicy => ({
  name: 'deployer',
  tools: ['read'],
  permissionMode: 'default',
  secrets: [],
  timeoutSecs: 300,
  ...c,
});
const remaining = { secs: 400 };

describe('checkEscalation', () => {
  it('allows a child within the parent', () => {
    expect(
      checkEscalation(
        parent,
        child({ tools: ['read', 'grep'], permissionMode: 'accept_edits', secrets: ['GH_TOKEN'], timeoutSecs: 400 }),
        remaining,
      ),
    ).toEqual({ ok: true });
  });

  it('refuses a tool the parent lacks, with the exact message', () => {
    expect(checkEscalation(parent, child({ tools: ['read', 'shell'] }), remaining)).toEqual({
      ok: false,
      field: 'tools',
      message: "spawn refused: 'deployer' asks for tool 'shell', which parent 'lead-3kd9p1' does not have (tools)",
    });
  });

  it.each([
    [
      'permission_mode',
      { permissionMode: 'dont_ask' as const },
      "spawn refused: 'deployer' asks for permission mode 'dont_ask', above the 'accept_edits' of parent 'lead-3kd9p1' (permission_mode)",
    ],
    [
      'secrets',
      { secrets: ['AWS_SECRET_ACCESS_KEY'] },
      "spawn refused: 'deployer' asks for secret 'AWS_SECRET_ACCESS_KEY', which parent 'lead-3kd9p1' may not request (secrets)",
    ],
    [
      'timeout_secs',
      { timeoutSecs: 401 },
      "spawn refused: 'deployer' asks for timeout_secs 401, above the 400 s parent 'lead-3kd9p1' has left (timeout_secs)",
    ],
  ])('refuses more %s', (field, c, message) => {
    expect(checkEscalation(parent, child(c), remaining)).toEqual({ ok: false, field, message });
  });

  it('orders modes plan < default < accept_edits < dont_ask < bypass_permissions', () => {
    const modes = ['plan', 'default', 'accept_edits', 'dont_ask', 'bypass_permissions'] as const;
    for (const [i, p] of modes.entries()) {
      for (const [j, c] of modes.entries()) {
        const r = checkEscalation({ ...parent, permissionMode: p }, child({ permissionMode: c }), remaining);
        expect(r.ok, `${c} under ${p}`).toBe(j <= i);
      }
    }
  });
});

describe('fitToParent', () => {
  it('narrows only what the definition did not declare', () => {
    const wide = child({ tools: ['read', 'shell', 'grep'], permissionMode: 'dont_ask', timeoutSecs: 600 });
    const fitted = fitToParent(
      wide,
      { tools: false, permissionMode: false, maxTurns: false, timeoutSecs: false },
      parent,
      remaining,
    );
    expect(fitted).toMatchObject({ tools: ['read', 'grep'], permissionMode: 'accept_edits', timeoutSecs: 400 });
    expect(checkEscalation(parent, fitted, remaining)).toEqual({ ok: true });
    const declared = fitToParent(
      wide,
      { tools: true, permissionMode: true, maxTurns: true, timeoutSecs: true },
      parent,
      remaining,
    );
    expect(checkEscalation(parent, declared, remaining)).toMatchObject({ ok: false, field: 'tools' });
  });
});
