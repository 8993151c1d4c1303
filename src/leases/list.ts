import type { Layout } from '../layout/layout.js';
import { leaseLapsed, waiterGone } from './lapse.js';
import type { Lease, Waiter } from './lease.js';
import { allLeaseFiles } from './store.js';

/** One checkout's leases that hold now, and who waits (docs/design.md §16). */
export interface LeaseView {
  checkout: string;
  leases: Lease[];
  waiting: Waiter[];
}

/**
 * Lapsed leases and dead waiters left out, nothing written: `lease list`, status, the dashboard. No glob matcher is
 * loaded.
 */
export function listLeases(layout: Layout): LeaseView[] {
  const now = Date.now();
  return allLeaseFiles(layout)
    .map((f) => ({
      checkout: f.checkout,
      leases: f.leases.filter((l) => !leaseLapsed(layout, l, now)),
      waiting: f.waiting.filter((w) => !waiterGone(w)),
    }))
    .filter((v) => v.leases.length > 0 || v.waiting.length > 0);
}
