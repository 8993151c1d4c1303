import { closeSync, mkdirSync, openSync, readdirSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import type { CapsBus, ChildPlace } from './caps-port.js';
import type { Config } from '../config/schema.js';
import { FlotillaError, isErrno, refusal } from '../errors.js';
import type { Layout } from '../layout/layout.js';
import { ID_PATTERN } from './ids.js';
import { childDepth } from './lineage.js';
import { recordLiveness } from './liveness.js';
import type { AgentRecord } from './record.js';
import { liveRecords } from './live.js';
import { inTurn, type QueueOptions } from './slot-queue.js';
import { reserveRunning } from './fleet-slot.js';
import { reserveSlot, type SlotReservation } from './slots.js';

/**
 * The spawn refusals of §5.2 that depend on the fleet: depth, live children, spawns per
 * tree, running agents. Each returns (or throws) a FlotillaError from `refusal()`, whose
 * `bracket` is the machine-readable line (`[flotilla:depth-limit depth=4 max=3]`).
 */

type Limits = Pick<Config['limits'], 'max_depth' | 'max_children' | 'max_spawns_per_tree' | 'max_running'>;

/** Refuses a child deeper than `limits.max_depth`; null when allowed. */
export function depthRefusal(parent: Pick<AgentRecord, 'depth'> | null, maxDepth: number): FlotillaError | null {
  const depth = childDepth(parent);
  if (depth <= maxDepth) return null;
  return refusal(
    'depth-limit',
    `spawn refused: depth ${depth} exceeds limits.max_depth ${maxDepth} — do this task yourself, or raise limits.max_depth`,
    { depth, max: maxDepth },
  );
}

/**
 * Children of `parentId` that count against `limits.max_children`: running ones, and ones a
 * spawner is opening right now (no pid yet). Dead-but-unreaped children do not count.
 */
export function liveChildren(parentId: string, records: readonly AgentRecord[]): AgentRecord[] {
  return records.filter((r) => r.parentId === parentId && ['live', 'pending'].includes(recordLiveness(r)));
}

/**
 * Refuses a spawn when the parent already has `limits.max_children` live children on this
 * host; null when allowed. On one machine not exact under concurrent spawns by one parent (a
 * parent spawns one at a time); on a bus with fleet-wide caps the parent's places on the bus
 * are the exact count over every host (`CapsBus.claimChild`), taken after this cheap check.
 */
export function childrenRefusal(
  parent: AgentRecord | null,
  maxChildren: number,
  records: readonly AgentRecord[],
): FlotillaError | null {
  if (!parent) return null;
  const children = liveChildren(parent.id, records).length;
  if (children < maxChildren) return null;
  return refusal(
    'children-limit',
    `spawn refused: '${parent.id}' already has ${children} live children (limits.max_children ${maxChildren}) — wait for one to finish (flotilla wait), or raise limits.max_children`,
    { parent: parent.id, children, max: maxChildren },
  );
}

/** The refusal when every concurrency slot is held (§5.3). */
export function concurrencyRefusal(running: number, max: number): FlotillaError {
  return refusal(
    'concurrency-limit',
    `spawn refused: ${running} agents are working (limits.max_running ${max}) — spawn with --queue to wait for a slot, wait for one to finish (flotilla wait), or raise limits.max_running`,
    { running, max },
  );
}

/**
 * Reserves a concurrency slot, or throws the concurrency refusal — or, with `queue`
 * (`spawn-agent --queue`), waits in line for one (§5.2). On a bus with fleet-wide caps the
 * slot is the host's and one of the fleet's (fleet-slot.ts); the line is this host's.
 */
export async function reserveRunningSlot(
  layout: Layout,
  maxRunning: number,
  queue?: QueueOptions,
  fleet?: { caps: CapsBus; agentId: string },
): Promise<SlotReservation> {
  const attempt = fleet?.caps.fleetWide
    ? () => reserveRunning(layout, maxRunning, fleet.caps, fleet.agentId)
    : () => reserveSlot(layout, maxRunning);
  const reservation = queue ? await inTurn(layout, attempt, queue) : await attempt();
  if (!reservation) throw concurrencyRefusal(maxRunning, maxRunning);
  return reservation;
}

function treeDir(layout: Layout, rootId: string): string {
  // rootId names a directory: never let it climb out of slots/.
  if (!ID_PATTERN.test(rootId))
    throw new FlotillaError(`invalid root id '${rootId}' — the registry record is damaged; run 'flotilla gc'`);
  return layout.treeSpawns(rootId);
}

/** Spawns a tree has used so far (claimed numbers; they never go down). */
export function treeSpawnCount(layout: Layout, rootId: string): number {
  try {
    return readdirSync(treeDir(layout, rootId)).filter((f) => f.startsWith('spawn-')).length;
  } catch (err) {
    if (isErrno(err, 'ENOENT')) return 0;
    throw err;
  }
}

/**
 * Claims one of the tree's `limits.max_spawns_per_tree` spawns, exactly under any number of
 * concurrent spawners: spawn n is the file `slots/tree-<rootId>/spawn-<n>` created with
 * O_EXCL, so each n in 0..max-1 is won by exactly one process, and since numbers are never
 * given back, all taken means the tree is spent. Returns the number claimed; throws the
 * tree-limit refusal when none is left. `agentId` is written into the file for gc and doctors.
 */
export function claimTreeSpawn(layout: Layout, rootId: string, max: number, agentId: string): number {
  const dir = treeDir(layout, rootId);
  mkdirSync(dir, { recursive: true });
  // Skip the numbers already taken (one readdir), but still try every gap: a number being
  // claimed right now may not be visible yet, and O_EXCL settles that race.
  const taken = new Set(readdirSync(dir));
  for (let n = 0; n < max; n++) {
    const name = `spawn-${n}`;
    if (taken.has(name)) continue;
    let fd: number;
    try {
      fd = openSync(join(dir, name), 'wx');
    } catch (err) {
      if (isErrno(err, 'EEXIST')) continue;
      throw err;
    }
    writeSync(fd, `${agentId}\n`);
    closeSync(fd);
    return n;
  }
  throw refusal(
    'tree-limit',
    `spawn refused: tree '${rootId}' has used all ${max} spawns (limits.max_spawns_per_tree ${max}) — finish with the agents you have, or raise limits.max_spawns_per_tree`,
    { root: rootId, spawns: max, max },
  );
}

export interface SpawnAdmission {
  depth: number;
  /** The running slot reserved for the child; hand `envValue` to it as FLOTILLA_SLOT. */
  slot: SlotReservation;
  /** The tree spawn number claimed (never given back). */
  spawnNumber: number;
  /**
   * The parent's place taken for the child on a bus with fleet-wide caps: release it if the spawn fails before the
   * child's record exists.
   */
  place: ChildPlace;
}

const NO_PLACE: ChildPlace = { release: () => undefined };

/**
 * All the registry-dependent checks of §5.2 in order, cheapest and reversible first: depth,
 * the parent's children (and its place on the bus), a running slot (released again on a later refusal), then the
 * tree's spawn count (permanent, so last). `rootId` is the tree the child joins (its own id
 * for a root spawn, which then uses spawn 0 of its tree).
 */
export async function admitSpawn(
  layout: Layout,
  limits: Limits,
  child: { id: string; parent: AgentRecord | null; rootId: string },
  /** The non-terminal records (liveRecords); finished agents never count against a cap. */
  records: readonly AgentRecord[] = liveRecords(layout),
  queue?: QueueOptions,
  /** The bus's caps (§18); on `maildir` (or absent) the host's slots and tree files, unchanged. */
  caps?: CapsBus,
): Promise<SpawnAdmission> {
  const depthErr = depthRefusal(child.parent, limits.max_depth);
  if (depthErr) throw depthErr;
  const childrenErr = childrenRefusal(child.parent, limits.max_children, records);
  if (childrenErr) throw childrenErr;
  const fleet = caps?.fleetWide ? caps : undefined;
  // Exact across hosts (docs/decisions-hosts.md "Caps on the bus"): one of the parent's places on the bus.
  const place =
    fleet && child.parent ? await fleet.claimChild(child.parent.id, limits.max_children, child.id) : NO_PLACE;
  let slot: SlotReservation | undefined;
  try {
    slot = await reserveRunningSlot(
      layout,
      limits.max_running,
      queue && { ...queue, agentId: child.id },
      fleet && { caps: fleet, agentId: child.id },
    );
    const spawnNumber = fleet
      ? await fleet.claimTreeSpawn(child.rootId, limits.max_spawns_per_tree, child.id)
      : claimTreeSpawn(layout, child.rootId, limits.max_spawns_per_tree, child.id);
    return { depth: childDepth(child.parent), slot, spawnNumber, place };
  } catch (err) {
    slot?.release();
    place.release();
    throw err;
  }
}
