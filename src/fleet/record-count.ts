import { readFileSync, renameSync, statSync, writeFileSync } from 'node:fs';
import { isErrno } from '../errors.js';
import type { Layout } from '../layout/layout.js';
import { nodeIo, type FleetIo } from './fleet-io.js';
import { selfPid } from './proc.js';
import { countIds } from './registry.js';

/**
 * How many records the registry holds, for status's "… 4,890 finished" line, without listing
 * a registry that has not changed: the count is kept in `state/index/record-count`, keyed by
 * the registry directory's inode and change times. Every record write renames a file into
 * that directory, and gc removes or moves files out of it, so any change to the set of
 * records gives the directory a new mtime and the next count lists it again.
 *
 * A change in the same clock tick as the one the key was taken in would leave the mtime as
 * it was, so a count is stored only for a directory that has been still for SETTLED_MS (the
 * rule git uses for its index): while the fleet is busy, status lists the registry as before
 * (~1 µs a record); once it has settled, the count costs a stat and a small read at any size.
 */
const SETTLED_MS = 2_000;

export function countRecords(layout: Layout, io: FleetIo = nodeIo): number {
  let key: string;
  let settled: boolean;
  try {
    const st = statSync(layout.registryDir, { bigint: true });
    key = `${st.ino} ${st.mtimeNs} ${st.ctimeNs}`;
    settled = Date.now() - Number(st.mtimeMs) > SETTLED_MS;
  } catch (err) {
    if (isErrno(err, 'ENOENT')) return 0;
    throw err;
  }
  const file = cacheFile(layout);
  const cached = readCached(file, key);
  if (cached !== undefined) return cached;
  const count = countIds(layout, io);
  if (settled) writeCached(file, `${key}\n${count}\n`);
  return count;
}

function cacheFile(layout: Layout): string {
  return `${layout.indexDir}/record-count`;
}

function readCached(file: string, key: string): number | undefined {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch {
    return undefined;
  }
  const [k, n] = text.split('\n');
  return k === key && /^\d+$/.test(n ?? '') ? Number(n) : undefined;
}

function writeCached(file: string, text: string): void {
  // No fsync: a count lost in a crash is taken again by the next status.
  // The host pid: two commands in two pid namespaces may share a namespace-local one.
  const tmp = `${file}.${selfPid()}.tmp`;
  try {
    writeFileSync(tmp, text);
    renameSync(tmp, file);
  } catch {
    // A read-only fleet root (a sandboxed shell) just goes without.
  }
}
