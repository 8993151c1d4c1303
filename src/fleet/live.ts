import { statSync } from 'node:fs';
import type { Layout } from '../layout/layout.js';
import { nodeIo, type FleetIo } from './fleet-io.js';
import { isTerminal } from './record-status.js';
import type { AgentRecord } from './record.js';
import { endedUsage, indexBuilt, liveIndexIds, rebuildIndex, recentEndedIds, unmarkLive } from './registry-index.js';
import { byCodeUnit } from '../compare.js';
import { errorMessage } from '../errors.js';
import { countRecords } from './record-count.js';
import { listRecords, readRecord, type CorruptRecord } from './registry.js';

/**
 * Reads of the fleet that must not grow with its history: the live agents, a tree's usage,
 * a parent's live children, the agents that ended last. Each goes through the indexes of
 * src/fleet/registry-index.ts and reads only the records it needs; finished agents' records
 * are never read here (test/fleet/history-independent.unit.test.ts counts the reads).
 */

/** Builds the indexes from the records when they are missing (a fleet made before them, or deleted). */
export function ensureIndex(layout: Layout, io: FleetIo = nodeIo): void {
  if (indexBuilt(layout, io)) return;
  rebuildIndex(layout, listRecords(layout));
}

/** Longer than any spawner takes from marking an agent live to writing its record. */
const SPAWN_WRITE_GRACE_MS = 60_000;

/** How old a live entry is (0 when it is gone: nothing to remove). */
function entryAgeMs(layout: Layout, id: string): number {
  try {
    return Date.now() - statSync(layout.liveIndex(id)).mtimeMs;
  } catch {
    return 0;
  }
}

/**
 * Every non-terminal record (running, starting, or dead but not yet reaped), oldest first; a damaged one goes to
 * `onCorrupt`.
 */
export function liveRecords(
  layout: Layout,
  io: FleetIo = nodeIo,
  onCorrupt?: (c: CorruptRecord) => void,
): AgentRecord[] {
  ensureIndex(layout, io);
  const out: AgentRecord[] = [];
  for (const id of liveIndexIds(layout, io)) {
    let rec: AgentRecord | undefined;
    try {
      rec = readRecord(layout, id, io);
    } catch (err) {
      // A damaged record: status shows it, gc sets it aside; it is not proof the agent ended.
      onCorrupt?.({ id, file: layout.registryFile(id), error: errorMessage(err) });
      continue;
    }
    // A leftover entry (its record ended, or was removed): drop it so nobody reads it again.
    // A fresh entry with no record yet is a spawn between marking and writing: keep it, or
    // the agent would be missing from every live view for good (a dozen spawns at once hit this).
    if (!rec) {
      if (entryAgeMs(layout, id) > SPAWN_WRITE_GRACE_MS) unmarkLive(layout, id);
      continue;
    }
    if (isTerminal(rec.status)) {
      unmarkLive(layout, id);
      continue;
    }
    out.push(rec);
  }
  return out.sort((a, b) => byCodeUnit(a.createdAt, b.createdAt) || byCodeUnit(a.id, b.id));
}

/** Usage of a whole tree (§11): the final usage of its ended agents plus its live ones' so far. */
export function treeUsage(
  layout: Layout,
  rootId: string,
  io: FleetIo = nodeIo,
  live: readonly AgentRecord[] = liveRecords(layout, io),
): { tokens: number; costUsd: number } {
  const ended = endedUsage(layout, rootId, io);
  let tokens = 0;
  let costUsd = 0;
  for (const r of live) {
    if (r.rootId !== rootId) continue;
    // Still live: its record is current, whatever an earlier crash left in the usage file.
    ended.delete(r.id);
    tokens += r.usage.inputTokens + r.usage.outputTokens;
    costUsd += r.usage.costUsd ?? 0;
  }
  for (const u of ended.values()) {
    tokens += u.tokens;
    costUsd += u.costUsd;
  }
  return { tokens, costUsd };
}

/**
 * An agent's subtree (children, theirs, …), nearest level first, from the children index
 * (`state/children/<parent>/<child>`, written at spawn): only those records are read, never
 * the rest of the fleet. A child whose record gc removed is skipped, its own children not.
 */
export function subtreeRecords(layout: Layout, id: string, io: FleetIo = nodeIo): AgentRecord[] {
  ensureIndex(layout, io);
  const out: AgentRecord[] = [];
  const seen = new Set([id]);
  let frontier = [id];
  while (frontier.length > 0) {
    const level: AgentRecord[] = [];
    const next: string[] = [];
    for (const parent of frontier) {
      let kids: string[];
      try {
        kids = io.readdir(layout.children(parent));
      } catch {
        continue;
      }
      for (const kid of kids) {
        if (seen.has(kid)) continue;
        seen.add(kid);
        next.push(kid);
        let rec: AgentRecord | undefined;
        try {
          rec = readRecord(layout, kid, io);
        } catch {
          rec = undefined;
        }
        if (rec) level.push(rec);
      }
    }
    out.push(...level.sort((a, b) => byCodeUnit(a.createdAt, b.createdAt) || byCodeUnit(a.id, b.id)));
    frontier = next;
  }
  return out;
}

/** How many finished agents `status` and `watch` show besides the live ones. */
export const RECENT_WINDOW = 100;

/**
 * What `status` shows by default: every non-terminal record, plus the `window` agents that
 * ended last; `hidden` is how many other finished records exist (`status --all` lists them).
 */
export function recentRecords(
  layout: Layout,
  window = RECENT_WINDOW,
  io: FleetIo = nodeIo,
  live: readonly AgentRecord[] = liveRecords(layout, io),
): { records: AgentRecord[]; hidden: number } {
  const shown = new Set(live.map((r) => r.id));
  const out = [...live];
  for (const id of recentEndedIds(layout, window)) {
    if (shown.has(id)) continue;
    let rec: AgentRecord | undefined;
    try {
      rec = readRecord(layout, id, io);
    } catch {
      rec = undefined;
    }
    if (!rec) continue;
    shown.add(id);
    out.push(rec);
  }
  return {
    records: out.sort((a, b) => byCodeUnit(a.createdAt, b.createdAt) || byCodeUnit(a.id, b.id)),
    hidden: Math.max(0, countRecords(layout, io) - out.length),
  };
}
