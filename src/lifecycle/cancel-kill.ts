import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import type { Layout } from '../layout/layout.js';

/**
 * A cancel's SIGKILL, said before it is sent (§5.8): whichever reaper ends the agent — the
 * cancel itself, or the pane's sh that saw its harness killed, which may come first — ends it
 * `cancelled` with the cancel's reason, never `crashed`. Removed with the agent's other
 * markers by gc.
 */
function killMarker(layout: Layout, agentId: string): string {
  return layout.marker(`${agentId}.cancel-kill`);
}

/** Records that a cancel is about to SIGKILL `agentId`, and why. */
export function markCancelKill(layout: Layout, agentId: string, reason: string): void {
  const path = killMarker(layout, agentId);
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, reason);
}

/** The reason of a cancel that SIGKILLed `agentId`, or undefined when none did. */
export function cancelKillReason(layout: Layout, agentId: string): string | undefined {
  try {
    return readFileSync(killMarker(layout, agentId), 'utf8') || undefined;
  } catch {
    return undefined;
  }
}
