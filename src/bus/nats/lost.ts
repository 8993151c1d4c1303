import type { KV } from '@nats-io/kv';
import { isTerminal } from '../../fleet/record-status.js';
import { parseAgentRecord } from '../../fleet/record-validate.generated.js';
import type { AgentRecord } from '../../fleet/record.js';
import type { DoneClaim, LostMark } from '../types.js';
import { withTimeout } from './timeout.js';

const TIMEOUT_MS = 5_000;

/** Who took a task's once-marker (DONE bucket, key `<id>.task-<n>`). */
interface DoneMark {
  by: 'host' | 'lost';
  /** The host whose process took it. */
  host: string;
  pid: number;
  at: string;
}

export function doneKey(id: string, task: number): string {
  return `${id}.task-${task}`;
}

/**
 * The task a lost mark ends: the open one, or — for an agent idle after answering its last
 * task, whose completion is already out — the next, so the notice never collides with a
 * completion the parent already has (docs/decisions-hosts.md "Lost agents").
 */
export function lostTask(rec: AgentRecord): number {
  return rec.lastTask && rec.lastTask.task >= rec.task ? rec.task + 1 : rec.task;
}

/** `rec` as the fleet marks it: terminal `lost`, ending `task` (by default the one lostTask names) (§3, §17.8). */
export function asLost(rec: AgentRecord, reason: string, now = new Date(), task = lostTask(rec)): AgentRecord {
  const finishedAt = now.toISOString();
  return {
    ...rec,
    status: 'lost',
    exitReason: reason,
    finishedAt,
    task,
    lastTask: { task, status: 'lost', exitReason: reason, finishedAt, outputPath: null },
  };
}

/** How many tasks a mark moves past whose completions the agent's host sent before its record said so. */
const MAX_TASKS_BEHIND = 8;

/**
 * Marks the live record `id` of another host lost with a revision-checked update (§17.8): of
 * every reader that tries, exactly one update succeeds; the others (and every reader after a
 * put by the record's own host) get null. The winner then takes the once-marker of the task
 * the mark ends. A marker its host already holds means that task's completion went out
 * before the record saying so reached the bus (a vendor agent's turn-end hook writes the
 * record without the bus; its shim brings it over on its next beat): the parent has that
 * answer, so the mark ends the next task instead, and the record on the bus says so
 * (docs/decisions-hosts.md "Lost agents").
 */
export async function markLostOn(
  records: KV,
  done: KV,
  id: string,
  self: string,
  reason: (rec: AgentRecord) => string,
): Promise<LostMark | null> {
  const entry = await withTimeout(records.get(id), TIMEOUT_MS);
  if (!entry || entry.operation !== 'PUT') return null;
  let rec: AgentRecord;
  try {
    const parsed = parseAgentRecord(JSON.parse(new TextDecoder().decode(entry.value)));
    if (!parsed.success) return null;
    rec = parsed.data;
  } catch {
    return null;
  }
  // This host's own agents are its registry's to end; a record without a host predates hosts.
  if (isTerminal(rec.status) || !rec.host || rec.host === self) return null;
  const now = new Date();
  let lost = asLost(rec, reason(rec), now);
  let revision: number;
  try {
    revision = await withTimeout(records.update(id, JSON.stringify(lost), entry.revision), TIMEOUT_MS);
  } catch (err) {
    if (isWrongRevision(err)) return null;
    throw err;
  }
  for (let behind = 0; ; behind++) {
    const claim = await takeDoneOn(done, id, lost.task, 'lost', self);
    if (claim !== 'sent' || behind === MAX_TASKS_BEHIND) return { rec: lost, claim };
    // Only this winner writes a lost record (its host's publishes never overwrite one, records.ts).
    const next = asLost(rec, lost.exitReason!, now, lost.task + 1);
    try {
      revision = await withTimeout(records.update(id, JSON.stringify(next), revision), TIMEOUT_MS);
    } catch {
      // The record stays as marked; the notice still goes out, under the task whose marker it holds.
    }
    lost = next;
  }
}

/**
 * Takes the fleet-wide once-marker of a task's completion (§5.7 across hosts): a KV create,
 * which exactly one writer wins. The agent's own host taking it again (a sender of that host
 * that crashed after taking it) wins again: its local marker (fleet/done-once.ts) and the
 * completion's fixed id already make that retry safe.
 */
export async function takeDoneOn(
  done: KV,
  id: string,
  task: number,
  by: DoneMark['by'],
  self: string,
): Promise<DoneClaim> {
  const key = doneKey(id, task);
  const mark: DoneMark = { by, host: self, pid: process.pid, at: new Date().toISOString() };
  try {
    await withTimeout(done.create(key, JSON.stringify(mark)), TIMEOUT_MS);
    return 'won';
  } catch (err) {
    if (!isWrongRevision(err) && !/exists/i.test(String(err))) return 'unreachable';
  }
  try {
    const entry = await withTimeout(done.get(key), TIMEOUT_MS);
    if (!entry || entry.operation !== 'PUT') return 'unreachable';
    const held = JSON.parse(new TextDecoder().decode(entry.value)) as Partial<DoneMark>;
    if (held.by === 'lost') return 'lost';
    return by === 'host' && held.host === self ? 'won' : 'sent';
  } catch {
    return 'unreachable';
  }
}

/** JetStream's answer to a write whose expected revision is no longer the key's last. */
export function isWrongRevision(err: unknown): boolean {
  const text =
    err instanceof Error
      ? `${err.message} ${String((err as { api_error?: { err_code?: number } }).api_error?.err_code ?? '')}`
      : String(err);
  return /wrong last sequence|10071/.test(text);
}
