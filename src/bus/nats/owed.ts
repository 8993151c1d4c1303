import { closeSync, mkdirSync, openSync, readdirSync, unlinkSync } from 'node:fs';
import { join } from 'node:path';
import type { Layout } from '../../layout/layout.js';

/**
 * The records this host owes the bus (§18): a record whose publish failed while the bus was away
 * is marked by an empty file under `state/unpublished/`, so the next process of this host that
 * reaches the bus publishes it, whichever process failed.
 */

export function owed(layout: Layout, id: string): void {
  try {
    mkdirSync(layout.unpublished, { recursive: true });
    closeSync(openSync(join(layout.unpublished, id), 'a'));
  } catch {
    // Only a later catch-up is lost; the agent's own next write publishes it again.
  }
}

export function settled(layout: Layout, id: string): void {
  try {
    unlinkSync(join(layout.unpublished, id));
  } catch {
    /* not owed */
  }
}

export function owedIds(layout: Layout): string[] {
  try {
    return readdirSync(layout.unpublished).filter((n) => !n.startsWith('.'));
  } catch {
    return [];
  }
}
