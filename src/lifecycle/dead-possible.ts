import { recordLiveness } from '../fleet/liveness.js';
import { liveRecords } from '../fleet/live.js';
import type { Layout } from '../layout/layout.js';
import { finishingIds } from './reserve.js';

/**
 * Whether `reconcileDead(layout, config)` could end anything now: a non-terminal record whose
 * harness is dead or not yet started, or an ending a harness left half done (§5.7). False
 * means it would change nothing, so a spawn need not load it (its modules are most of its
 * cost there). The same reads it starts with, nothing cached: a record that died a moment ago
 * shows here as it would there.
 */
export function deadPossible(layout: Layout): boolean {
  if (finishingIds(layout).length) return true;
  // 'pending' may be a spawner that died before the handoff: reconcileDead judges that itself.
  return liveRecords(layout).some((rec) => {
    const live = recordLiveness(rec);
    return live !== 'live' && live !== 'ended';
  });
}
