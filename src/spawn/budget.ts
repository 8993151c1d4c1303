import type { Config } from '../config/schema.js';
import { refusal, type FlotillaError } from '../errors.js';
import type { AgentRecord } from '../fleet/record.js';

/** Usage of a whole tree (§11): every record sharing the root. */
export function treeUsage(rootId: string, records: readonly AgentRecord[]): { tokens: number; costUsd: number } {
  let tokens = 0;
  let costUsd = 0;
  for (const r of records) {
    if (r.rootId !== rootId) continue;
    tokens += r.usage.inputTokens + r.usage.outputTokens;
    costUsd += r.usage.costUsd ?? 0;
  }
  return { tokens, costUsd };
}

/** The budget refusal for a tree, or null while budget is left. */
export function budgetRefusal(rootId: string, records: readonly AgentRecord[], budget: Config['budget']): FlotillaError | null {
  const used = treeUsage(rootId, records);
  if (budget.max_tokens_per_tree !== null && used.tokens >= budget.max_tokens_per_tree) {
    return refusal('budget', `budget exhausted: tree '${rootId}' used ${used.tokens} of ${budget.max_tokens_per_tree} tokens (budget.max_tokens_per_tree) — raise the budget or start a new tree`, {
      root: rootId, tokens: used.tokens, max: budget.max_tokens_per_tree,
    });
  }
  if (budget.max_cost_usd_per_tree !== null && used.costUsd >= budget.max_cost_usd_per_tree) {
    return refusal('budget', `budget exhausted: tree '${rootId}' spent $${used.costUsd.toFixed(4)} of $${budget.max_cost_usd_per_tree} (budget.max_cost_usd_per_tree) — raise the budget or start a new tree`, {
      root: rootId, cost_usd: used.costUsd.toFixed(4), max: budget.max_cost_usd_per_tree,
    });
  }
  return null;
}
