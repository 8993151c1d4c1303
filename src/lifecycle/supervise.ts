import type { Config } from '../config/schema.js';
import type { Layout } from '../layout/layout.js';
import { reconcileDead } from './reconcile.js';

/** How often a live parent checks its children's pids (§5.7: "every few seconds"). */
export const SUPERVISE_INTERVAL_MS = 2_000;

/**
 * A live harness's check on its own children: every ~2 s, any child whose harness died
 * without ending its record is reaped (terminal state, one completion to this parent).
 * A second path beside the pane-died hook, for headless children and lost hooks.
 * Returns the function that stops it.
 */
export function superviseChildren(layout: Layout, config: Config, parentId: string, intervalMs = SUPERVISE_INTERVAL_MS): () => void {
  let running = false;
  const timer = setInterval(() => {
    if (running) return;
    running = true;
    reconcileDead(layout, config, { parentId })
      .catch(() => undefined)
      .finally(() => { running = false; });
  }, intervalMs);
  // Supervision never keeps a finished harness alive.
  timer.unref();
  return () => clearInterval(timer);
}
