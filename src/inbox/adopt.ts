import { existsSync, mkdirSync, readdirSync, renameSync, unlinkSync } from 'node:fs';
import { join } from 'node:path';
import type { AgentRecord } from '../fleet/record.js';
import { readRecord } from '../fleet/registry.js';
import type { Layout } from '../layout/layout.js';
import { maildir, READ_SUFFIX } from './maildir.js';

/**
 * A resumed agent's mail (§8): the successor adopts its predecessor's unread messages and
 * accepts mail addressed to every agent it continues — whichever runtime runs it.
 */

/** Moves the unread messages of a resumed agent into its successor's new/ (same names, atomic renames). */
export function adoptUnread(layout: Layout, fromId: string, toId: string): void {
  const to = maildir(layout, toId).new;
  mkdirSync(to, { recursive: true });
  moveUnread(layout, fromId, to);
}

/**
 * Moves `fromId`'s unread messages into the new/ folder `into`, same names, atomic renames.
 * A name `fromId` has already claimed is a second copy (a bus handed it over again): it is
 * dropped, not moved, since in another inbox no reader could tell it was read.
 */
export function moveUnread(layout: Layout, fromId: string, into: string): void {
  const box = maildir(layout, fromId);
  let names: string[];
  try {
    names = readdirSync(box.new);
  } catch {
    return;
  }
  for (const name of names) {
    const path = join(box.new, name);
    try {
      if (existsSync(join(box.cur, name + READ_SUFFIX))) unlinkSync(path);
      else renameSync(path, join(into, name));
    } catch {
      /* claimed or moved meanwhile */
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
