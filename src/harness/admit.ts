import type { Config } from '../config/schema.js';
import { FlotillaError, refusal } from '../errors.js';
import { depthRefusal } from '../fleet/caps.js';
import type { AgentRecord } from '../fleet/record.js';
import { nodeIo, type FleetIo } from '../fleet/fleet-io.js';
import { readRecord } from '../fleet/registry.js';
import { holdSlot, parseSlotEnv, type SlotHold } from '../fleet/slots.js';
import type { Layout } from '../layout/layout.js';
import { treeBudgetRefusal } from '../spawn/budget.js';

/**
 * The harness's own check that it may exist (§5.6), the authority whatever the spawner
 * did: its record exists and is fresh, lineage is consistent, depth ≤ max, it holds its
 * running slot, and the tree has budget left. Throws a refusal (with its bracketed line).
 * Reads its parent's record and the live ones, never a finished agent's (`io` counts them in tests).
 */
export async function admitSelf(layout: Layout, config: Config, rec: AgentRecord, slotEnv: string | undefined, io: FleetIo = nodeIo): Promise<SlotHold> {
  if (rec.status !== 'spawning') {
    throw new FlotillaError(`agent '${rec.id}' is '${rec.status}', not a fresh spawn — use 'flotilla resume ${rec.id}' to continue it`, { code: 'not-fresh' });
  }
  if (rec.parentId) {
    const parent = readRecord(layout, rec.parentId, io);
    if (!parent) throw refusal('lineage', `refused: parent '${rec.parentId}' has no registry record`, { parent: rec.parentId });
    if (rec.depth !== parent.depth + 1 || rec.rootId !== parent.rootId) {
      throw refusal('lineage', `refused: lineage is inconsistent (depth ${rec.depth}, parent depth ${parent.depth})`, { depth: rec.depth, parent_depth: parent.depth });
    }
  } else if (rec.depth !== 0 || rec.rootId !== rec.id) {
    throw refusal('lineage', `refused: a root agent must have depth 0 and be its own root`, { depth: rec.depth });
  }
  if (rec.depth > config.limits.max_depth) {
    throw depthRefusal({ depth: rec.depth - 1 }, config.limits.max_depth) ?? refusal('depth-limit', 'refused: too deep', { depth: rec.depth, max: config.limits.max_depth });
  }
  const broke = treeBudgetRefusal(layout, rec.rootId, config.budget, io);
  if (broke) throw broke;
  const slot = parseSlotEnv(slotEnv);
  if (!slot) throw refusal('concurrency-limit', `refused: no running slot was handed to this agent (FLOTILLA_SLOT) — start agents with spawn-agent or flotilla run`, { running: 'unknown', max: config.limits.max_running });
  try {
    return await holdSlot(layout, slot.index, slot.token);
  } catch (err) {
    throw refusal('concurrency-limit', `refused: could not take running slot ${slot.index}: ${(err as Error).message}`, { slot: slot.index, max: config.limits.max_running });
  }
}
