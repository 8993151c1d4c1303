import { readdirSync } from 'node:fs';
import type { Config } from '../config/schema.js';
import type { Layout } from '../layout/layout.js';
import { reconcileDead } from './reconcile.js';

/** How often a live parent checks its children's pids (§5.7: "every few seconds"). */
export const SUPERVISE_INTERVAL_MS = 2_000;
/** How often an agent with no children yet looks for its first one (an idle fleet stays quiet). */
export const SUPERVISE_IDLE_INTERVAL_MS = 10_000;

/**
 * A live harness's check on its own children: every ~2 s, any child whose harness died
 * without ending its record is reaped (terminal state, one completion to this parent).
 * A second path beside the pane-died hook, for headless children and lost hooks. Children
 * are found in the parent's index (`state/children/<id>/`, written at spawn), so a check
 * reads only them, and an agent that has none wakes only every 10 s.
 * Returns the function that stops it.
 */
const wakers = new Map<string, () => void>();

/** Tells this process's supervisor of `parentId` (if any) that it has a new child: check at the fast pace now. */
export function childSpawned(parentId: string): void {
  wakers.get(parentId)?.();
}

export function superviseChildren(
  layout: Layout,
  config: Config,
  parentId: string,
  intervalMs = SUPERVISE_INTERVAL_MS,
): () => void {
  let timer: NodeJS.Timeout | undefined;
  let stopped = false;
  wakers.set(parentId, () => {
    clearTimeout(timer);
    schedule(intervalMs);
  });
  const schedule = (ms: number) => {
    if (stopped) return;
    timer = setTimeout(() => void tick(), ms);
    // Supervision never keeps a finished harness alive.
    timer.unref();
  };
  const tick = async () => {
    let ids: string[] = [];
    try {
      ids = readdirSync(layout.children(parentId));
    } catch {
      /* no child yet */
    }
    if (ids.length > 0) await reconcileDead(layout, config, { parentId, ids }).catch(() => undefined);
    schedule(ids.length > 0 ? intervalMs : Math.max(intervalMs, SUPERVISE_IDLE_INTERVAL_MS));
  };
  schedule(intervalMs);
  return () => {
    stopped = true;
    wakers.delete(parentId);
    clearTimeout(timer);
  };
}
