import { isProcessAlive } from '../fleet/proc.js';
import { readRecord } from '../fleet/registry.js';
import type { Layout } from '../layout/layout.js';
import { claimantGone } from '../tasks/claimant.js';
import type { Lease, Waiter } from './lease.js';

/**
 * Why a lease no longer holds, or null (docs/design.md §16). The holder's end is judged exactly
 * as a task board judges a claimant's (tasks/claimant.ts: record ended, or its process gone by
 * pid and start time, §5.7), so a SIGKILLed agent or a closed window frees its leases as soon
 * as crash detection would see it, with no daemon. A lease without expiry also ends with the
 * task it was taken in; one with a ttl outlives the task until it expires.
 */
export function leaseLapsed(
  layout: Layout,
  lease: Lease,
  now = Date.now(),
): { event: 'lease_expired' | 'lease_released'; reason: string } | null {
  if (lease.expires_at !== null && Date.parse(lease.expires_at) <= now)
    return { event: 'lease_expired', reason: `its ttl ran out at ${lease.expires_at}` };
  const gone = claimantGone(layout, lease.holder);
  if (gone) return { event: 'lease_released', reason: `its holder ${gone}` };
  if (lease.expires_at === null && lease.task !== null && lease.holder !== 'human') {
    let rec;
    try {
      rec = readRecord(layout, lease.holder);
    } catch {
      return null;
    }
    if (rec && (rec.task > lease.task || (rec.lastTask !== null && rec.lastTask.task >= lease.task))) {
      return { event: 'lease_released', reason: `its holder's task ${lease.task} ended` };
    }
  }
  return null;
}

/** A waiter whose waiting process has gone leaves the queue. */
export function waiterGone(w: Waiter): boolean {
  return !isProcessAlive(w.pid, w.pid_start);
}
