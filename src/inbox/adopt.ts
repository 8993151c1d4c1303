import { mkdirSync, readdirSync, renameSync } from 'node:fs';
import { join } from 'node:path';
import type { AgentRecord } from '../fleet/record.js';
import { readRecord } from '../fleet/registry.js';
import type { Layout } from '../layout/layout.js';
import { maildir } from './maildir.js';

/**
 * A resumed agent's mail (§8): the successor adopts its predecessor's unread messages and
 * accepts mail addressed to every agent it continues — whichever runtime runs it.
 */

/** Moves the unread messages of a resumed agent into its successor's new/ (same names, atomic renames). */
export function adoptUnread(layout: Layout, fromId: string, toId: string): void {
  const from = maildir(layout, fromId).new;
  const to = maildir(layout, toId).new;
  let names: string[];
  try {
    names = readdirSync(from);
  } catch {
    return;
  }
  mkdirSync(to, { recursive: true });
  for (const name of names) {
    try {
      renameSync(join(from, name), join(to, name));
    } catch {
      /* claimed meanwhile */
    }
  }
}

/** The agents this one continues (resume chain), whose adopted mail is addressed to them. */
export function predecessors(layout: Layout, rec: Pick<AgentRecord, 'resumedFrom'>): string[] {
  const out: string[] = [];
  for (
    let id = rec.resumedFrom;
    id && !out.includes(id) && out.length < 64;
    id = recordOrNull(layout, id)?.resumedFrom ?? null
  )
    out.push(id);
  return out;
}

/** A damaged record in the chain ends it rather than the agent. */
function recordOrNull(layout: Layout, id: string): AgentRecord | null {
  try {
    return readRecord(layout, id) ?? null;
  } catch {
    return null;
  }
}
