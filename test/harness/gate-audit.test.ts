import { afterEach, describe, expect, it } from 'vitest';
import { readAudit } from '../../src/audit/read.js';
import type { Definition } from '../../src/definitions/types.js';
import { createRecord } from '../../src/fleet/registry.js';
import { createGate } from '../../src/harness/gate.js';
import type { Approvals, ApprovalOutcome } from '../../src/approvals/ask.js';
import type { ShellClassifier } from '../../src/policy/index.js';
import type { Tool } from '../../src/tools/types.js';
import { tempFleet, type TempFleet } from '../helpers/fleet.js';
import { recordInput } from '../helpers/records.js';

/**
 * docs/security.md, the tool policy and "One decision per call": a call to a tool the agent was
 * not given is refused with a WARN log line and audit lines naming the list that withheld it;
 * a person's "no" and an unanswered question reach the audit as ask→denied and ask→timeout.
 * The person is stood in for by a fixed answer (test/approvals/answer.test.ts asks a real one).
 */
let f: TempFleet | undefined;
afterEach(() => {
  f?.cleanup();
  f = undefined;
});

const tool = (name: string, klass: Tool['klass']) => ({ name, klass }) as unknown as Tool;
const noShell = (): Promise<ShellClassifier> => Promise.reject(new Error('no shell call here'));

function gateWith(answer: ApprovalOutcome | null) {
  f = tempFleet();
  const record = createRecord(f.layout, recordInput('g-1', { permissionMode: 'default', cwd: f.project }));
  const warns: object[] = [];
  const log = { debug() {}, info() {}, error() {}, warn: (o: object) => void warns.push(o) };
  const approvals = { ask: () => Promise.resolve(answer) } as unknown as Approvals;
  const gate = createGate({
    layout: f.layout,
    record,
    policy: { tools: ['read', 'write'], withheld: { edit: 'tools.deny' } },
    definition: { hooks: { PreToolUse: [], PostToolUse: [] } } as unknown as Definition,
    approvals,
    canAsk: true,
    hookContext: { agentId: 'g-1', agentName: 'g', cwd: f.project },
    log,
    shellClassifier: noShell,
  });
  return { gate, warns, layout: f.layout };
}

describe('the gate writes what it decided', () => {
  it('a withheld tool: refused, one WARN, tool_call and policy_denied naming the list', async () => {
    const { gate, warns, layout } = gateWith(null);
    expect(await gate({ id: 'c1', name: 'edit', input: { path: 'a.txt' } }, tool('edit', 'write'))).toMatchObject({
      allow: false,
    });
    expect(warns).toEqual([{ tool: 'edit', rule: 'tools.deny' }]);
    expect(readAudit(layout, { event: 'tool_call' }).lines).toEqual([
      expect.objectContaining({ agent: 'g-1', tool: 'edit', decision: 'deny', rule: 'tools.deny' }),
    ]);
    expect(readAudit(layout, { event: 'policy_denied' }).lines).toEqual([
      expect.objectContaining({ agent: 'g-1', tool: 'edit', rule: 'tools.deny' }),
    ]);
  });

  it.each([
    [{ approved: false, by: 'cli', reason: 'no' }, 'ask→denied', 'approval:cli'],
    [{ approved: false, by: 'timeout', reason: 'nobody answered' }, 'ask→timeout', 'approval:timeout'],
  ] as const)('a write a person does not approve (%o) is audited %s', async (answer, decision, rule) => {
    const { gate, layout } = gateWith(answer);
    expect(await gate({ id: 'c2', name: 'write', input: { path: 'a.txt' } }, tool('write', 'write'))).toMatchObject({
      allow: false,
    });
    expect(readAudit(layout, { event: 'tool_call' }).lines).toEqual([
      expect.objectContaining({ tool: 'write', decision, rule, path: 'a.txt' }),
    ]);
  });
});
