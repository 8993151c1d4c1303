import { afterEach, describe, expect, it } from 'vitest';
import { listRecords } from '../../src/fleet/registry.js';
import { flotilla } from '../helpers/cli.js';
import { tempFleet, type TempFleet } from '../helpers/fleet.js';
import { fixture } from '../helpers/scripts.js';

let fleet: TempFleet;
afterEach(() => fleet?.cleanup());

describe('tree budget (§11)', () => {
  it('stops work with exit_reason budget once the tree has used its tokens', async () => {
    fleet = tempFleet();
    const env = {
      FLOTILLA_ROOT: fleet.layout.root,
      FLOTILLA_AGENTS_DEFAULT_PERMISSION_MODE: 'dont_ask',
      FLOTILLA_BUDGET_MAX_TOKENS_PER_TREE: '1000',
    };
    const r = await flotilla(
      ['run', '--id', 'spender', '--model', `script:${fixture('harness/costly.yaml')}`, 'spend'],
      { cwd: fleet.project, env },
    );
    expect(r.exitCode).toBe(1);
    const [rec] = listRecords(fleet.layout);
    expect(rec).toMatchObject({ status: 'failed', exitReason: 'budget', turns: 2 });
    expect(rec!.usage.inputTokens + rec!.usage.outputTokens).toBe(1200);
    expect(r.stderr).toMatch(/budget exhausted: tree 'spender' used 1200 of 1000 tokens/);
  });
});

describe('budget refusal at spawn', () => {
  it('refuses a tree that used its tokens or money, with the bracketed line', async () => {
    const { budgetRefusal } = await import('../../src/spawn/budget.js');
    const { recordInput } = await import('../helpers/records.js');
    const { agentRecordSchema } = await import('../../src/fleet/record-schema.js');
    const records = [
      agentRecordSchema.parse(
        recordInput('lead-aaaaaa', {
          rootId: 'lead-aaaaaa',
          usage: { inputTokens: 700, outputTokens: 100, costUsd: 0.5 },
        }),
      ),
      agentRecordSchema.parse(
        recordInput('kid-bbbbbb', {
          rootId: 'lead-aaaaaa',
          usage: { inputTokens: 150, outputTokens: 50, costUsd: 0.25 },
        }),
      ),
      agentRecordSchema.parse(
        recordInput('other-cccccc', {
          rootId: 'other-cccccc',
          usage: { inputTokens: 5000, outputTokens: 0, costUsd: null },
        }),
      ),
    ];
    expect(
      budgetRefusal('lead-aaaaaa', records, { max_tokens_per_tree: 1001, max_cost_usd_per_tree: null }),
    ).toBeNull();
    const tokens = budgetRefusal('lead-aaaaaa', records, { max_tokens_per_tree: 1000, max_cost_usd_per_tree: null });
    expect(tokens?.message).toBe(
      "budget exhausted: tree 'lead-aaaaaa' used 1000 of 1000 tokens (budget.max_tokens_per_tree) — raise the budget or start a new tree",
    );
    expect(tokens?.bracket).toBe('[flotilla:budget root=lead-aaaaaa tokens=1000 max=1000]');
    const money = budgetRefusal('lead-aaaaaa', records, { max_tokens_per_tree: null, max_cost_usd_per_tree: 0.75 });
    expect(money?.bracket).toBe('[flotilla:budget root=lead-aaaaaa cost_usd=0.7500 max=0.75]');
  });
});
