import type { Layout } from '../layout/layout.js';
import { doneOnce } from '../fleet/done-once.js';

/**
 * Runs an agent's stop hooks once (§9), whichever process gets there first — the harness
 * as it ends, the reaper after a crash. The marker (`layout.stopHookMarker`) is written only
 * after the hooks ran (`doneOnce`): a harness killed mid-hook leaves no marker, and the
 * reaper runs them again, so they run at least once; a second signal or a second caller
 * never skips them. Returns true when this call ran `run`.
 */
export function stopHookOnce(layout: Layout, agentId: string, run: () => Promise<void>): Promise<boolean> {
  return doneOnce(layout.stopHookMarker(agentId), run);
}
