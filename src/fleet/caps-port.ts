import type { AgentRecord } from './record.js';

/**
 * The caps of §5.2 that must hold across every host of a fleet (docs/decisions-hosts.md, "Caps on
 * the bus"). The host's own socket slot (fleet/slots.ts) stays on either bus — exact on its
 * machine and freed by the kernel; on `nats` a running agent also holds one of
 * `limits.max_running` keys of the fleet's slot bucket. On `maildir` one machine is the
 * whole fleet, so the fleet slot is the host's own and costs nothing, and tree spawns are
 * today's O_EXCL files. Declared in fleet/ (and re-exported as `Bus.caps`'s type by
 * bus/types.ts) because the bus's code imports the fleet's, never the other way.
 */
export interface CapsBus {
  /** True on `nats`: a slot here is one of the whole fleet's, held beside the host's own. */
  readonly fleetWide: boolean;
  /**
   * Takes a fleet slot for `agentId`; null when `cap` are held fleet-wide. Throws the
   * `bus-unreachable` refusal when the bus cannot answer: a slot nobody checked is never granted.
   */
  takeSlot(agentId: string, cap: number): Promise<FleetSlot | null>;
  /**
   * The harness's side (§5.6, the authority): takes over the slot its spawner took for it, by
   * a revision-checked write. Throws when that slot is gone or another agent's.
   */
  adoptSlot(index: number, agentId: string): Promise<FleetSlot>;
  /** How many fleet slots are held now (for `waiting for a slot N/M`). */
  countSlots(cap: number): Promise<number>;
  /**
   * Claims one of the tree's `limits.max_spawns_per_tree` spawns, exactly under any number
   * of spawners on any hosts; throws the `tree-limit` refusal when none is left.
   */
  claimTreeSpawn(rootId: string, max: number, agentId: string): Promise<number>;
  /** Spawns the tree has used (they never go down). */
  treeSpawnCount(rootId: string): Promise<number>;
  /**
   * Takes one of the parent's `limits.max_children` places for `childId`, exactly under any
   * number of spawners on any hosts (`fleetWide`); throws the `children-limit` refusal when
   * every place is held by a live child. On `maildir` the host's live records are the count
   * (fleet/caps.ts childrenRefusal) and the place is nothing to hold.
   */
  claimChild(parentId: string, max: number, childId: string): Promise<ChildPlace>;
  /**
   * What an agent's end means for the fleet's counts: its parent's place is given back and
   * its final usage kept for its tree's budget (once). Nothing on `maildir`.
   */
  ended(rec: Pick<AgentRecord, 'id' | 'parentId' | 'rootId' | 'usage' | 'host'>): Promise<void>;
  /**
   * A tree's usage on the fleet's other hosts (§11): their ended agents' final usage plus
   * their live agents' records; this host's own is its usage index and live records
   * (fleet/live.ts treeUsage). Null on `maildir`, where this host is the whole fleet. Throws
   * the `bus-unreachable` refusal when the bus cannot answer.
   */
  treeUsageElsewhere(rootId: string): Promise<{ tokens: number; costUsd: number } | null>;
}

/** A parent's place taken for a child being spawned: given back if the spawn fails before the child exists. */
export interface ChildPlace {
  release(): void;
}

/** A slot of the whole fleet, held until released or, once its holder stops renewing it, until the bucket's TTL. */
export interface FleetSlot {
  /** Its key's number (0..cap-1); -1 on `maildir`, where the host's own slot is the fleet's. */
  readonly index: number;
  /** True once it was found taken by another holder (it expired while this one could not renew it). */
  lost(): boolean;
  /** Stops renewing without deleting: the harness it was taken for has adopted it. */
  handOver(): void;
  /** Gives it up; idempotent. The bus's close() waits for the release to reach the server. */
  release(): void;
}
