import type { Config } from '../config/schema.js';
import { FlotillaError, refusal } from '../errors.js';
import { depthRefusal } from '../fleet/caps.js';
import type { AgentRecord } from '../fleet/record.js';
import { nodeIo, type FleetIo } from '../fleet/fleet-io.js';
import { readRecord } from '../fleet/registry.js';
import { remoteLineage } from '../hosts/lineage.js';
import { holdSlot, parseSlotEnv, type SlotHold } from '../fleet/slots.js';
import type { Layout } from '../layout/layout.js';
import { fleetBudgetRefusal } from '../spawn/budget.js';

/**
 * The harness's own check that it may exist (§5.6), the authority whatever the spawner
 * did: its record exists and is fresh, lineage is consistent, depth ≤ max, it holds its
 * running slot, and the tree has budget left. Throws a refusal (with its bracketed line).
 * Reads its parent's record and the live ones, never a finished agent's (`io` counts them in tests).
 */
export async function admitSelf(
  layout: Layout,
  config: Config,
  rec: AgentRecord,
  slotEnv: string | undefined,
  io: FleetIo = nodeIo,
): Promise<SlotHold> {
  if (rec.status !== 'spawning') {
    throw new FlotillaError(
      `agent '${rec.id}' is '${rec.status}', not a fresh spawn — use 'flotilla resume ${rec.id}' to continue it`,
      { code: 'not-fresh' },
    );
  }
  let maxDepth = config.limits.max_depth;
  if (rec.parentId) {
    // A parent on another host (§17.5): the lineage its spawn was given stands for its record here.
    const here = readRecord(layout, rec.parentId, io);
    const lineage = here ? undefined : remoteLineage(layout, rec.id);
    if (lineage) maxDepth = Math.min(maxDepth, lineage.limits.max_depth);
    const parent = here ?? (lineage?.parent.id === rec.parentId ? lineage.parent : undefined);
    if (!parent)
      throw refusal('lineage', `refused: parent '${rec.parentId}' has no registry record`, { parent: rec.parentId });
    if (rec.depth !== parent.depth + 1 || rec.rootId !== parent.rootId) {
      throw refusal('lineage', `refused: lineage is inconsistent (depth ${rec.depth}, parent depth ${parent.depth})`, {
        depth: rec.depth,
        parent_depth: parent.depth,
      });
    }
  } else if (rec.depth !== 0 || rec.rootId !== rec.id) {
    throw refusal('lineage', `refused: a root agent must have depth 0 and be its own root`, { depth: rec.depth });
  }
  if (rec.depth > maxDepth) {
    throw (
      depthRefusal({ depth: rec.depth - 1 }, maxDepth) ??
      refusal('depth-limit', 'refused: too deep', { depth: rec.depth, max: maxDepth })
    );
  }
  // Every host's agents of the tree (§11); its spawner checked the bus moments ago, so an unreachable one leaves this
  // host's count.
  const broke = await fleetBudgetRefusal(layout, config, rec.rootId, { unreachable: 'local', io });
  if (broke) throw broke;
  const slot = parseSlotEnv(slotEnv);
  if (!slot)
    throw refusal(
      'concurrency-limit',
      `refused: no running slot was handed to this agent (FLOTILLA_SLOT) — start agents with spawn-agent or flotilla run`,
      { running: 'unknown', max: config.limits.max_running },
    );
  try {
    // On a bus with fleet-wide caps (§18) it adopts the fleet's slot its spawner took, then the host's.
    if (config.fleet.bus === 'maildir') return await holdSlot(layout, slot.index, slot.token);
    const { busFor } = await import('../bus/open.js');
    const { holdRunning } = await import('../fleet/fleet-slot.js');
    return await holdRunning(layout, busFor(layout, config).caps, slot, rec.id);
  } catch (err) {
    if (err instanceof FlotillaError && err.code === 'bus-unreachable') throw err;
    throw refusal(
      'concurrency-limit',
      `refused: could not take running slot ${slot.index}: ${(err as Error).message}`,
      { slot: slot.index, max: config.limits.max_running },
    );
  }
}
