import type { Config } from '../config/schema.js';
import { refusal, type FlotillaError } from '../errors.js';
import { nodeIo, type FleetIo } from '../fleet/fleet-io.js';
import { treeUsage } from '../fleet/live.js';
import type { AgentRecord } from '../fleet/record.js';
import type { Layout } from '../layout/layout.js';

export interface TreeUsage {
  tokens: number;
  costUsd: number;
}

/** Usage of a whole tree (§11) summed over the given records (those sharing the root). */
export function sumTreeUsage(rootId: string, records: readonly AgentRecord[]): TreeUsage {
  let tokens = 0;
  let costUsd = 0;
  for (const r of records) {
    if (r.rootId !== rootId) continue;
    tokens += r.usage.inputTokens + r.usage.outputTokens;
    costUsd += r.usage.costUsd ?? 0;
  }
  return { tokens, costUsd };
}

/**
 * The budget check before every model call and every spawn (§11): reads the tree's usage
 * index and the live records only, so it costs the same however many agents have finished.
 * Free when no budget is set. `live` saves a second read when the caller has them already.
 */
export function treeBudgetRefusal(
  layout: Layout,
  rootId: string,
  budget: Config['budget'],
  io: FleetIo = nodeIo,
  live?: readonly AgentRecord[],
): FlotillaError | null {
  if (budget.max_tokens_per_tree === null && budget.max_cost_usd_per_tree === null) return null;
  return budgetRefusal(rootId, treeUsage(layout, rootId, io, live), budget);
}

/**
 * §11 over every host of the fleet: this host's usage (treeBudgetRefusal, enough to refuse on
 * its own) plus, on a `nats://` bus, the tree's usage on the other hosts (`CapsBus`; ended
 * agents' final usage kept once each, live ones' records). A bus that cannot answer is the
 * `bus-unreachable` refusal for a spawn (`unreachable: 'refuse'`: a budget nobody checked
 * is never granted); an agent already working goes on by this host's count (`'local'`), as
 * its slot does.
 */
export async function fleetBudgetRefusal(
  layout: Layout,
  config: Pick<Config, 'budget' | 'fleet'> & Partial<Pick<Config, 'hosts'>>,
  rootId: string,
  opts: { unreachable: 'refuse' | 'local'; io?: FleetIo; live?: readonly AgentRecord[] },
): Promise<FlotillaError | null> {
  const { budget } = config;
  if (budget.max_tokens_per_tree === null && budget.max_cost_usd_per_tree === null) return null;
  const here = treeUsage(layout, rootId, opts.io ?? nodeIo, opts.live);
  const local = budgetRefusal(rootId, here, budget);
  if (local || config.fleet.bus === 'maildir') return local;
  let elsewhere: TreeUsage | null;
  try {
    elsewhere = await (await import('../bus/open.js')).busFor(layout, config).caps.treeUsageElsewhere(rootId);
  } catch (err) {
    if (opts.unreachable === 'local') return null;
    throw err;
  }
  if (!elsewhere) return null;
  return budgetRefusal(
    rootId,
    { tokens: here.tokens + elsewhere.tokens, costUsd: here.costUsd + elsewhere.costUsd },
    budget,
  );
}

/** The budget refusal for a tree, or null while budget is left. */
export function budgetRefusal(
  rootId: string,
  usage: TreeUsage | readonly AgentRecord[],
  budget: Config['budget'],
): FlotillaError | null {
  const used = Array.isArray(usage) ? sumTreeUsage(rootId, usage as readonly AgentRecord[]) : (usage as TreeUsage);
  if (budget.max_tokens_per_tree !== null && used.tokens >= budget.max_tokens_per_tree) {
    return refusal(
      'budget',
      `budget exhausted: tree '${rootId}' used ${used.tokens} of ${budget.max_tokens_per_tree} tokens (budget.max_tokens_per_tree) — raise the budget or start a new tree`,
      {
        root: rootId,
        tokens: used.tokens,
        max: budget.max_tokens_per_tree,
      },
    );
  }
  if (budget.max_cost_usd_per_tree !== null && used.costUsd >= budget.max_cost_usd_per_tree) {
    return refusal(
      'budget',
      `budget exhausted: tree '${rootId}' spent $${used.costUsd.toFixed(4)} of $${budget.max_cost_usd_per_tree} (budget.max_cost_usd_per_tree) — raise the budget or start a new tree`,
      {
        root: rootId,
        cost_usd: used.costUsd.toFixed(4),
        max: budget.max_cost_usd_per_tree,
      },
    );
  }
  return null;
}
