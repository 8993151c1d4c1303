import { mkdirSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { writeFileAtomic } from '../layout/atomic.js';
import type { Layout } from '../layout/layout.js';

/**
 * Failures a person has looked at (attention.ts): `state/seen/<agent id>` holds the stamp
 * of the failure seen. Written when a person goes to the agent (Enter or `n` in the
 * dashboard, `flotilla next`); a later failure of the same agent has a new stamp and needs
 * them again. Shared by every dashboard and terminal, so they agree on the count.
 */

export function readSeen(layout: Layout): Map<string, string> {
  const out = new Map<string, string>();
  let names: string[];
  try {
    names = readdirSync(layout.seenDir);
  } catch {
    return out;
  }
  for (const name of names) {
    if (name.startsWith('.')) continue;
    try {
      out.set(name, readFileSync(join(layout.seenDir, name), 'utf8').trim());
    } catch {
      // Replaced meanwhile: read on the next pass.
    }
  }
  return out;
}

/** Records that a person has seen this failure (`stamp` from attention.ts `failureStamp`). */
export function markSeen(layout: Layout, agentId: string, stamp: string): void {
  mkdirSync(layout.seenDir, { recursive: true });
  writeFileAtomic(layout.seen(agentId), stamp + '\n');
}
