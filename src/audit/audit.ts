import { closeSync, openSync, writeSync } from 'node:fs';
import type { Layout } from '../layout/layout.js';
import { redactValue } from '../secrets/redact.js';
import { isoTime } from '../iso-time.js';

/**
 * The shared audit trail (§9): `state/audit.jsonl`, one JSON object per line, each line
 * written with a single write(2) on an O_APPEND descriptor and kept under 4 KiB, so
 * concurrent writers never interleave within a line. Never holds message bodies or secret
 * values: callers pass ids, names and decisions, and any value this process holds is
 * redacted from the line before it is written (§11).
 */

export const AUDIT_LINE_MAX = 4096;
const FIELD_MAX = 512;

export type AuditEventName =
  | 'agent_start'
  | 'agent_end'
  | 'spawn'
  | 'spawn_refused'
  | 'tool_call'
  | 'tool_result'
  | 'policy_denied'
  | 'approval'
  | 'approval_refused'
  | 'message_sent'
  | 'message_claimed'
  | 'message_rejected'
  | 'human_input'
  | 'hook_run'
  | 'secret_requested'
  | 'secret_granted'
  | 'secret_denied'
  | 'secret_expired'
  | 'secret_revoked'
  | 'secret_holder_ended'
  | 'secret_holder_left'
  | 'completion'
  | 'completion_withheld'
  | 'import_failed'
  | 'agent_lost'
  | 'cancel'
  | 'reap'
  | 'gc'
  | 'message_duplicate_id'
  | 'broadcast'
  | 'task_created'
  | 'task_claimed'
  | 'task_released'
  | 'task_reopened'
  | 'task_done'
  | 'task_failed'
  | 'task_cancelled'
  | 'task_refused'
  | 'schedule_added'
  | 'schedule_changed'
  | 'schedule_removed'
  | 'schedule_fired'
  | 'schedule_queued'
  | 'schedule_skipped'
  | 'schedule_missed'
  | 'schedule_run_ended'
  | 'scheduler_start'
  | 'scheduler_stop'
  | 'lease_taken'
  | 'lease_refused'
  | 'lease_queued'
  | 'lease_released'
  | 'lease_expired';

export interface AuditEvent {
  event: AuditEventName;
  /** The agent the event is about (or `human`). */
  agent?: string;
  [field: string]: unknown;
}

export interface AuditLine extends AuditEvent {
  ts: string;
  pid: number;
}

/** Serializes an event as one line under 4 KiB, truncating long fields and marking them. */
export function auditLine(event: AuditEvent, now = new Date()): string {
  const base: AuditLine = { ts: isoTime(now), pid: process.pid, ...event };
  let line = JSON.stringify(base);
  if (Buffer.byteLength(line) < AUDIT_LINE_MAX) return line + '\n';
  const truncated: string[] = [];
  const shrunk: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(base)) {
    const s = typeof v === 'string' ? v : JSON.stringify(v);
    if (s !== undefined && s.length > FIELD_MAX && k !== 'event' && k !== 'ts') {
      shrunk[k] = s.slice(0, FIELD_MAX) + '…';
      truncated.push(k);
    } else {
      shrunk[k] = v;
    }
  }
  shrunk.truncated = truncated;
  line = JSON.stringify(shrunk);
  // Many long fields can still add up: keep only the identifying ones.
  if (Buffer.byteLength(line) >= AUDIT_LINE_MAX) {
    line = JSON.stringify({ ts: base.ts, pid: base.pid, event: base.event, agent: base.agent, truncated: ['*'] });
  }
  return line + '\n';
}

const fds = new Map<string, number>();

/** Appends one event. Never throws: an audit failure must not stop an agent. */
export function audit(layout: Layout, event: AuditEvent): void {
  const path = layout.auditFile;
  try {
    let fd = fds.get(path);
    if (fd === undefined) {
      fd = openSync(path, 'a', 0o644);
      fds.set(path, fd);
    }
    writeSync(fd, auditLine(redactValue(event)));
  } catch {
    // Best effort by design: the state directory may be gone (gc) or the disk full.
  }
}

/** Closes cached descriptors (tests, shutdown). */
export function closeAudit(): void {
  for (const fd of fds.values()) {
    try {
      closeSync(fd);
    } catch {
      /* closed */
    }
  }
  fds.clear();
}
