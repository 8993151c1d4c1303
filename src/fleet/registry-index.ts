import {
  appendFileSync,
  closeSync,
  fstatSync,
  fsyncSync,
  mkdirSync,
  openSync,
  readSync,
  unlinkSync,
  writeFileSync,
  writeSync,
} from 'node:fs';
import { dirname, join } from 'node:path';
import { isErrno } from '../errors.js';
import type { Layout } from '../layout/layout.js';
import type { FleetIo } from './fleet-io.js';
import { isTerminal } from './record-status.js';
import type { AgentRecord } from './record.js';
import { byCodeUnit } from '../compare.js';

/**
 * Indexes beside the registry (§3), so that the hot paths — the budget check before every
 * model call, admission, spawn, status — cost the same with 10 or 10,000 finished agents:
 *
 *   state/index/live/<id>             one empty file per agent whose record may not be terminal
 *   state/index/trees/<rootId>.usage  `<id> <tokens> <costUsd|->`: final usage of each ended agent
 *   state/index/ended.log             ids in the order they ended (status's window)
 *
 * The records stay the only truth; every index is a hint that can be rebuilt from them
 * (`rebuildIndex`, run whenever `built-v1` is missing). The write order
 * keeps the hints safe across a crash at any point:
 *  - the live entry is created *before* the record and removed *after* its terminal write, so
 *    the live index is always a superset of the non-terminal records (a leftover entry is
 *    dropped by the first reader that finds its record terminal or gone);
 *  - the usage line is appended and fsync'd *before* the terminal write, so an ended agent's
 *    usage is never missing; a duplicate (a crash in between, then the reaper) is read once,
 *    by id, and ignored while the record is still live.
 */

export function markLive(layout: Layout, id: string): void {
  try {
    writeFileSync(layout.liveIndex(id), '');
  } catch (err) {
    if (!isErrno(err, 'ENOENT')) throw err;
    mkdirSync(layout.liveIndexDir, { recursive: true });
    writeFileSync(layout.liveIndex(id), '');
  }
}

export function unmarkLive(layout: Layout, id: string): void {
  try {
    unlinkSync(layout.liveIndex(id));
  } catch (err) {
    if (!isErrno(err, 'ENOENT')) throw err;
  }
}

/**
 * Appends an ending agent's final usage to its tree (fsync'd: the budget depends on it) and its id to the ended log.
 */
export function noteEnded(layout: Layout, rec: Pick<AgentRecord, 'id' | 'rootId' | 'usage'>): void {
  const file = layout.treeUsage(rec.rootId);
  const line = `${rec.id} ${rec.usage.inputTokens + rec.usage.outputTokens} ${rec.usage.costUsd ?? '-'}\n`;
  let fd: number;
  try {
    fd = openSync(file, 'a');
  } catch (err) {
    if (!isErrno(err, 'ENOENT')) throw err;
    mkdirSync(dirname(file), { recursive: true });
    fd = openSync(file, 'a');
  }
  try {
    writeSync(fd, line);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  // Display order only: a lost line means one agent missing from status's recent window.
  try {
    appendFileSync(layout.endedLog, `${rec.id}\n`);
  } catch {
    /* a hint */
  }
}

export function liveIndexIds(layout: Layout, io: FleetIo): string[] {
  try {
    return io.readdir(layout.liveIndexDir).filter((f) => !f.startsWith('.'));
  } catch (err) {
    if (isErrno(err, 'ENOENT')) return [];
    throw err;
  }
}

/** Final usage of the tree's ended agents by id (a repeated id counts once). */
export function endedUsage(
  layout: Layout,
  rootId: string,
  io: FleetIo,
): Map<string, { tokens: number; costUsd: number }> {
  const out = new Map<string, { tokens: number; costUsd: number }>();
  let text: string;
  try {
    text = io.readFile(layout.treeUsage(rootId));
  } catch (err) {
    if (isErrno(err, 'ENOENT')) return out;
    throw err;
  }
  for (const line of text.split('\n')) {
    const [id, tokens, cost] = line.split(' ');
    if (!id || tokens === undefined || cost === undefined) continue; // a torn last line
    out.set(id, { tokens: Number(tokens) || 0, costUsd: cost === '-' ? 0 : Number(cost) || 0 });
  }
  return out;
}

/** The ids that ended last, newest first, at most `max` (read from the log's tail only). */
export function recentEndedIds(layout: Layout, max: number): string[] {
  let fd: number;
  try {
    fd = openSync(layout.endedLog, 'r');
  } catch (err) {
    if (isErrno(err, 'ENOENT')) return [];
    throw err;
  }
  try {
    const size = fstatSync(fd).size;
    // Ids are ≤ 64 chars: this many bytes hold the last `max` lines.
    const want = Math.min(size, (max + 1) * 66);
    const buf = Buffer.alloc(want);
    readSync(fd, buf, 0, want, size - want);
    const lines = buf.toString('utf8').split('\n');
    if (want < size) lines.shift(); // cut mid-line
    const out: string[] = [];
    const seen = new Set<string>();
    for (let i = lines.length - 1; i >= 0 && out.length < max; i--) {
      const id = lines[i]!.trim();
      if (!id || seen.has(id)) continue;
      seen.add(id);
      out.push(id);
    }
    return out;
  } finally {
    closeSync(fd);
  }
}

export function indexBuilt(layout: Layout, io: FleetIo): boolean {
  return io.exists(layout.indexMarker);
}

/**
 * Builds every index from the records (all of them, oldest first). Safe while others write:
 * entries added meanwhile are supersets or duplicates the readers already tolerate.
 */
export function rebuildIndex(layout: Layout, records: readonly AgentRecord[]): void {
  mkdirSync(layout.liveIndexDir, { recursive: true });
  const ended: AgentRecord[] = [];
  const usage = new Map<string, string>();
  for (const rec of records) {
    // The children index predates this marker; a fleet whose index was deleted gets it back.
    if (rec.parentId) {
      mkdirSync(layout.children(rec.parentId), { recursive: true });
      writeFileSync(join(layout.children(rec.parentId), rec.id), '');
    }
    if (!isTerminal(rec.status)) {
      markLive(layout, rec.id);
      continue;
    }
    ended.push(rec);
    usage.set(
      rec.rootId,
      (usage.get(rec.rootId) ?? '') +
        `${rec.id} ${rec.usage.inputTokens + rec.usage.outputTokens} ${rec.usage.costUsd ?? '-'}\n`,
    );
  }
  mkdirSync(dirname(layout.treeUsage('x')), { recursive: true });
  // Appended, never overwritten: a line another process adds meanwhile must survive.
  for (const [rootId, lines] of usage) appendFileSync(layout.treeUsage(rootId), lines);
  ended.sort((a, b) => byCodeUnit(a.finishedAt ?? a.createdAt, b.finishedAt ?? b.createdAt));
  if (ended.length) appendFileSync(layout.endedLog, ended.map((r) => r.id).join('\n') + '\n');
  writeFileSync(layout.indexMarker, `built ${new Date().toISOString()} from ${records.length} records\n`);
}
