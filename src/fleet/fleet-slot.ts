import type { CapsBus, FleetSlot } from './caps-port.js';
import { FlotillaError } from '../errors.js';
import type { Layout } from '../layout/layout.js';
import { acquireSlot, holdSlot, reserveSlot, type SlotHold, type SlotReservation } from './slots.js';

/**
 * A running slot on a bus whose caps are fleet-wide (§5.2, §18): the host's own socket slot
 * (slots.ts: exact here, freed by the kernel) together with one of the fleet's
 * (bus/nats/caps.ts: exact across hosts, freed by its TTL). Taken in that order and given
 * back together, so an agent runs only while it holds both. On `maildir` the fleet slot is
 * the host's own and these are slots.ts unchanged (docs/decisions-hosts.md "Caps on the bus").
 */

/** Reserves both for a child about to be opened; null when either cap is full. */
export async function reserveRunning(
  layout: Layout,
  cap: number,
  caps: CapsBus,
  agentId: string,
): Promise<SlotReservation | null> {
  const local = await reserveSlot(layout, cap);
  const fleet = local && (await fleetSlotBeside(local, caps, agentId, cap));
  if (!local || !fleet) return null;
  if (fleet.index < 0) return local;
  return {
    index: local.index,
    token: local.token,
    // The harness learns which fleet slot to adopt from its FLOTILLA_SLOT: `<k>:<token>:<fleet k>`.
    envValue: `${local.envValue}:${fleet.index}`,
    async waitForHandoff(timeoutMs) {
      const handed = await local.waitForHandoff(timeoutMs);
      // The harness adopted the fleet slot before it took the host's (admit.ts): stop renewing.
      if (handed) fleet.handOver();
      else fleet.release();
      return handed;
    },
    release() {
      local.release();
      fleet.release();
    },
  };
}

/** Both held by one process: released together; `lost()` once the fleet slot was taken from it. */
export interface RunningHold extends SlotHold {
  lost(): boolean;
}

function both(local: SlotHold, fleet: FleetSlot): RunningHold {
  return {
    index: local.index,
    lost: () => fleet.lost(),
    release() {
      local.release();
      fleet.release();
    },
  };
}

/**
 * The harness's side of the handoff (§5.6): adopts the fleet slot its spawner took for it —
 * first, so the spawner stops renewing only once the harness renews — then the host's.
 */
export async function holdRunning(
  layout: Layout,
  caps: CapsBus,
  slot: { index: number; token: string; fleet: number | null },
  agentId: string,
): Promise<RunningHold> {
  if (!caps.fleetWide) return { ...(await holdSlot(layout, slot.index, slot.token)), lost: () => false };
  if (slot.fleet === null) {
    throw new FlotillaError(
      `no fleet slot was handed to this agent (FLOTILLA_SLOT has no fleet part), so it would run outside the fleet's limits.max_running — spawn it again with spawn-agent`,
      { code: 'slot-handoff' },
    );
  }
  const fleet = await caps.adoptSlot(slot.fleet, agentId);
  try {
    return both(await holdSlot(layout, slot.index, slot.token), fleet);
  } catch (err) {
    fleet.release();
    throw err;
  }
}

/** Takes both for this very process (an idle agent's new work, `flotilla run`); null when either cap is full. */
export async function acquireRunning(
  layout: Layout,
  cap: number,
  caps: CapsBus,
  agentId: string,
): Promise<RunningHold | null> {
  const local = await acquireSlot(layout, cap);
  const fleet = local && (await fleetSlotBeside(local, caps, agentId, cap));
  return local && fleet ? both(local, fleet) : null;
}

/** The fleet's slot for a host slot just taken; the host slot is given back when there is none (or the bus fails). */
async function fleetSlotBeside(
  local: { release(): void },
  caps: CapsBus,
  agentId: string,
  cap: number,
): Promise<FleetSlot | null> {
  const fleet = await caps.takeSlot(agentId, cap).catch((err: unknown) => {
    local.release();
    throw err;
  });
  if (!fleet) local.release();
  return fleet;
}
