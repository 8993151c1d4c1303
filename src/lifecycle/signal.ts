import { audit } from '../audit/audit.js';
import { isProcessAlive } from '../fleet/proc.js';
import { recordLiveness } from '../fleet/liveness.js';
import type { AgentRecord } from '../fleet/record.js';
import { liveRecords } from '../fleet/live.js';
import type { Layout } from '../layout/layout.js';

/** Process signals to agents, by record (pid start time checked, so a reused pid is never hit). */

/** True while the agent's harness process runs — even after it wrote its terminal state, while it exits. */
export function harnessRunning(rec: Pick<AgentRecord, 'pid' | 'pidStartTime'>): boolean {
  return rec.pid !== null && isProcessAlive(rec.pid, rec.pidStartTime);
}

/** Sends `signal` to an agent's harness process; false when it is not running. */
export function signalAgent(rec: AgentRecord, signal: NodeJS.Signals): boolean {
  if (!rec.pid || !harnessRunning(rec)) return false;
  try {
    process.kill(rec.pid, signal);
    return true;
  } catch {
    return false;
  }
}

/** Every descendant of `id` (children, their children, …), background ones included, nearest first. */
export function descendants(id: string, records: readonly AgentRecord[]): AgentRecord[] {
  const out: AgentRecord[] = [];
  let frontier = [id];
  while (frontier.length > 0) {
    const next = records.filter((r) => r.parentId !== null && frontier.includes(r.parentId));
    out.push(...next);
    frontier = next.map((r) => r.id);
  }
  return out;
}

/**
 * SIGTERM to the live foreground children of an agent that ended without doing it itself
 * (a crash): they cancel their own foreground children in turn (§5.8).
 */
export function terminateForegroundChildren(layout: Layout, parentId: string, by: string): string[] {
  const hit: string[] = [];
  // Only live records can be live children: an agent's end costs the same in a long-lived fleet.
  for (const child of liveRecords(layout)) {
    if (child.parentId !== parentId || child.background || recordLiveness(child) !== 'live') continue;
    if (signalAgent(child, 'SIGTERM')) {
      hit.push(child.id);
      audit(layout, { event: 'cancel', agent: child.id, by, cascade: true });
    }
  }
  return hit;
}
