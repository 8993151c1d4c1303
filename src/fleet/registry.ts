import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { errorMessage, FlotillaError, isErrno } from '../errors.js';
import { writeFileAtomic } from '../layout/atomic.js';
import { redactValue } from '../secrets/redact.js';
import type { Layout } from '../layout/layout.js';
import { withFileLockSync } from './file-lock.js';
import { nodeIo, type FleetIo } from './fleet-io.js';
import { resolvePrefix } from './ids.js';
import { canTransition, isTerminal } from './record-status.js';
import type { AgentRecord, AgentRecordInput } from './record.js';
import { parseAgentRecord } from './record-validate.generated.js';
import { markLive, noteEnded, unmarkLive } from './registry-index.js';
import { recordWritten } from './record-sink.js';
import { byCodeUnit } from '../compare.js';

/**
 * The registry (§3): one zod-validated JSON file per agent, written atomically. One writer
 * at a time per record (spawner, then harness, then only the reaper for a dead pid), so a
 * read-modify-write needs no lock; atomic rename means readers never see a torn file.
 */

export function readRecord(layout: Layout, id: string, io: FleetIo = nodeIo): AgentRecord | undefined {
  let text: string;
  try {
    text = io.readFile(layout.registryFile(id));
  } catch (err) {
    if (isErrno(err, 'ENOENT')) return undefined;
    throw err;
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (err) {
    throw corrupt(layout, id, `not JSON (${errorMessage(err)})`);
  }
  // The validator generated from the zod schema (tools/gen-validators.mjs): no zod at start-up.
  const parsed = parseAgentRecord(json);
  if (!parsed.success) throw corrupt(layout, id, `invalid: ${describe(parsed.error.issues[0])}`);
  return parsed.data;
}

/** Where corrupt records are set aside by `flotilla gc`. */
export function corruptDir(layout: Layout): string {
  return join(layout.registryDir, 'corrupt');
}

function corrupt(layout: Layout, id: string, what: string): FlotillaError {
  return new FlotillaError(
    `registry record ${layout.registryFile(id)} is ${what} — repair it, or run 'flotilla gc' to set it aside in ${corruptDir(layout)}`,
    { code: 'corrupt-record' },
  );
}

/** A registry file that cannot be read as a record. */
export interface CorruptRecord {
  id: string;
  file: string;
  error: string;
}

/** Like readRecord, but a missing record is an error that says how to list agents. */
export function getRecord(layout: Layout, id: string): AgentRecord {
  const rec = readRecord(layout, id);
  if (!rec)
    throw new FlotillaError(`no agent '${id}' in the registry — run 'flotilla status' to list agents`, {
      code: 'not-found',
    });
  return rec;
}

export function listIds(layout: Layout, io: FleetIo = nodeIo): string[] {
  try {
    return io
      .readdir(layout.registryDir)
      .filter((f) => f.endsWith('.json') && !f.startsWith('.'))
      .map((f) => f.slice(0, -5))
      .sort();
  } catch (err) {
    if (isErrno(err, 'ENOENT')) return [];
    throw err;
  }
}

/** How many records the registry holds (status's hidden count): one readdir, nothing sorted or read. */
export function countIds(layout: Layout, io: FleetIo = nodeIo): number {
  let names: string[];
  try {
    names = io.readdir(layout.registryDir);
  } catch (err) {
    if (isErrno(err, 'ENOENT')) return 0;
    throw err;
  }
  let n = 0;
  for (const f of names) if (f.endsWith('.json') && !f.startsWith('.')) n++;
  return n;
}

/**
 * Every readable record, oldest first; an unreadable file is skipped and handed to `onCorrupt` (status shows it, gc
 * sets it aside).
 */
export function listRecords(layout: Layout, onCorrupt?: (c: CorruptRecord) => void): AgentRecord[] {
  const out: AgentRecord[] = [];
  for (const id of listIds(layout)) {
    try {
      const rec = readRecord(layout, id);
      if (rec) out.push(rec);
    } catch (err) {
      // A corrupt record must not hide the rest of the fleet.
      onCorrupt?.({ id, file: layout.registryFile(id), error: errorMessage(err) });
    }
  }
  return out.sort((a, b) => byCodeUnit(a.createdAt, b.createdAt) || byCodeUnit(a.id, b.id));
}

/** Resolves a unique id prefix (§1) to a record. */
export function resolveAgent(layout: Layout, prefix: string): AgentRecord {
  return getRecord(layout, resolvePrefix(prefix, listIds(layout)));
}

/** Creates a record; fails if the id is taken. */
export function createRecord(layout: Layout, input: AgentRecordInput): AgentRecord {
  const rec = validRecord(input);
  if (readRecord(layout, rec.id)) {
    throw new FlotillaError(`agent id '${rec.id}' is already in use — choose another --id`, { code: 'id-taken' });
  }
  // Indexed as live before it exists (the live index is a superset of the live records).
  if (!isTerminal(rec.status)) markLive(layout, rec.id);
  writeFileAtomic(layout.registryFile(rec.id), JSON.stringify(redactValue(rec), null, 2) + '\n', layout.registryTmp);
  recordWritten(layout.root, rec);
  return rec;
}

/**
 * Updates a record, enforcing the status machine: a terminal state never changes and an
 * illegal move is an error naming both states. A function patch sees the record as it is
 * under the record's lock (withRecordLock).
 */
export function updateRecord(
  layout: Layout,
  id: string,
  change: Partial<AgentRecord> | ((rec: AgentRecord) => Partial<AgentRecord>),
): AgentRecord {
  return withRecordLock(layout, id, () => {
    const current = getRecord(layout, id);
    return applyChange(layout, current, typeof change === 'function' ? change(current) : change);
  });
}

/** A short-lived writer of a live agent's record; a record that ended meanwhile stays ended. */
export function updateQuietly(
  layout: Layout,
  id: string,
  patch: Partial<AgentRecord> | ((rec: AgentRecord) => Partial<AgentRecord>),
): AgentRecord | undefined {
  try {
    return updateRecord(layout, id, patch);
  } catch {
    return readRecord(layout, id);
  }
}

/** Ends a record if it is not already terminal; returns the record and whether this call ended it. */
export function endRecord(
  layout: Layout,
  id: string,
  end: Pick<AgentRecord, 'status'> & Partial<AgentRecord>,
): { record: AgentRecord; ended: boolean } {
  return withRecordLock(layout, id, () => {
    const current = getRecord(layout, id);
    if (!canTransition(current.status, end.status)) return { record: current, ended: false };
    return { record: applyChange(layout, current, { finishedAt: new Date().toISOString(), ...end }), ended: true };
  });
}

function applyChange(layout: Layout, current: AgentRecord, patch: Partial<AgentRecord>): AgentRecord {
  if (patch.status && !canTransition(current.status, patch.status)) {
    throw new FlotillaError(`agent '${current.id}' cannot go from '${current.status}' to '${patch.status}'`, {
      code: 'illegal-transition',
    });
  }
  const next = validRecord({ ...current, ...patch, id: current.id });
  const ending = isTerminal(next.status) && !isTerminal(current.status);
  // Its final usage joins the tree's before the record says it ended (src/fleet/registry-index.ts).
  if (ending) noteEnded(layout, next);
  writeFileAtomic(
    layout.registryFile(current.id),
    JSON.stringify(redactValue(next), null, 2) + '\n',
    layout.registryTmp,
  );
  if (ending) unmarkLive(layout, current.id);
  recordWritten(layout.root, next);
  return next;
}

/**
 * Replaces a record that can no longer be read (corrupt) with its harness's own copy — the
 * one writer's last word (§3), so an agent whose file was damaged still ends in a terminal
 * state. The indexes are kept as updateRecord keeps them.
 */
export function overwriteRecord(layout: Layout, rec: AgentRecord): AgentRecord {
  const next = validRecord(rec);
  return withRecordLock(layout, rec.id, () => {
    if (isTerminal(next.status)) noteEnded(layout, next);
    writeFileAtomic(layout.registryFile(rec.id), JSON.stringify(redactValue(next), null, 2) + '\n', layout.registryTmp);
    if (isTerminal(next.status)) unmarkLive(layout, rec.id);
    recordWritten(layout.root, next);
    return next;
  });
}

/**
 * One writer at a time per record. A vendor agent's record is written by its shim, by every hook
 * process its CLI starts, by the limits watcher and by `flotilla cancel`; two read-modify-writes
 * that interleave lose one change, and a hook's `lastLine` written over `cancelled` would bring an
 * ended agent back to `working` (docs/decisions-hosts.md, "Locks are files in the fleet root").
 */
function withRecordLock<T>(layout: Layout, id: string, fn: () => T): T {
  if (!existsSync(layout.registryTmp)) return fn(); // no registry here: the read in fn says so
  return withFileLockSync(
    layout.recordLock(id),
    {
      timeoutMs: 30_000,
      busy: () =>
        new FlotillaError(
          `agent '${id}''s record stayed locked for 30 s — if no flotilla process is running, remove ${layout.recordLock(id)} and try again`,
          { code: 'record-busy' },
        ),
    },
    fn,
  );
}

function describe(issue: { path: string; message: string } | undefined): string {
  if (!issue) return 'unknown';
  return issue.path ? `${issue.path}: ${issue.message}` : issue.message;
}

/** A record about to be written must be valid: a bug here must never reach the disk. */
function validRecord(input: unknown): AgentRecord {
  const parsed = parseAgentRecord(input);
  if (!parsed.success)
    throw new FlotillaError(`invalid agent record: ${describe(parsed.error.issues[0])}`, { code: 'invalid-record' });
  return parsed.data;
}
