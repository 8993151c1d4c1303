import type { Layout } from '../layout/layout.js';
import type { CapsBus, ChildPlace, FleetSlot } from '../fleet/caps-port.js';

/** On one machine the host's own socket slot is the fleet's slot: nothing more to hold. */
const HOST_SLOT: FleetSlot = { index: -1, lost: () => false, handOver: () => undefined, release: () => undefined };
/** On one machine a parent's children are counted from the host's live records (fleet/caps.ts): nothing to hold. */
const NO_PLACE: ChildPlace = { release: () => undefined };

/**
 * `fleet.bus: maildir` (§18): the caps are today's code, unchanged — the socket slots of
 * fleet/slots.ts and the O_EXCL tree files of fleet/caps.ts — loaded only when asked.
 */
export function localCaps(layout: Layout): CapsBus {
  return {
    fleetWide: false,
    takeSlot: () => Promise.resolve(HOST_SLOT),
    adoptSlot: () => Promise.resolve(HOST_SLOT),
    countSlots: async (cap) => (await import('../fleet/slots.js')).countHeld(layout, cap),
    claimTreeSpawn: async (rootId, max, agentId) =>
      (await import('../fleet/caps.js')).claimTreeSpawn(layout, rootId, max, agentId),
    treeSpawnCount: async (rootId) => (await import('../fleet/caps.js')).treeSpawnCount(layout, rootId),
    claimChild: () => Promise.resolve(NO_PLACE),
    ended: () => Promise.resolve(),
    treeUsageElsewhere: () => Promise.resolve(null),
  };
}
