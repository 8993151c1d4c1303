import { readdirSync } from 'node:fs';
import { isErrno } from '../errors.js';
import type { Layout } from '../layout/layout.js';
import type { TranscriptEntry } from '../transcript/entries.js';
import { tryReadMeta } from '../transcript/meta.js';
import { readTranscript, type Transcript } from '../transcript/reader.js';
import { byCodeUnit } from '../compare.js';

/** One link of a resume chain: an agent and (when it still exists) its transcript. */
export interface ChainLink {
  id: string;
  resumedFrom: string | null;
  /** Null when retention (or a person) deleted it. */
  transcript: Transcript | null;
  /** Entries at the start of this transcript copied from `resumedFrom`'s when it was resumed. */
  inherited: number;
}

/** Where an agent was resumed from: its sidecar, else its transcript header. */
function resumedFromOf(layout: Layout, id: string): string | null {
  try {
    const meta = tryReadMeta(layout, id);
    if (meta) return meta.resumed_from;
  } catch {
    // A bad sidecar: the header says the same.
  }
  try {
    return readTranscript(layout, id).header.resumed_from;
  } catch {
    return null;
  }
}

/**
 * The resume chain through `id` (§8): every agent it was resumed from, back to the first,
 * then `id`, then every agent resumed from it (and from those), oldest first. Walks the
 * sidecars' `resumed_from`, so it still works after the registry records are gone.
 */
export function resumeChain(layout: Layout, id: string): ChainLink[] {
  const back: string[] = [id];
  const seen = new Set([id]);
  for (let from = resumedFromOf(layout, id); from && !seen.has(from); from = resumedFromOf(layout, from)) {
    back.unshift(from);
    seen.add(from);
  }
  // Forward: which sidecars name a chain member as resumed_from.
  const children = new Map<string, { id: string; started: string }[]>();
  for (const name of metaNames(layout)) {
    const cid = name.slice(0, -'.meta.json'.length);
    let meta;
    try {
      meta = tryReadMeta(layout, cid);
    } catch {
      continue;
    }
    if (!meta?.resumed_from) continue;
    const list = children.get(meta.resumed_from) ?? [];
    list.push({ id: cid, started: meta.started_at });
    children.set(meta.resumed_from, list);
  }
  const ids = [...back];
  const queue = [id];
  while (queue.length > 0) {
    const next = (children.get(queue.shift()!) ?? []).sort(
      (a, b) => byCodeUnit(a.started, b.started) || byCodeUnit(a.id, b.id),
    );
    for (const c of next) {
      if (seen.has(c.id)) continue;
      seen.add(c.id);
      ids.push(c.id);
      queue.push(c.id);
    }
  }

  const transcripts = new Map<string, Transcript | null>();
  const load = (x: string): Transcript | null => {
    if (!transcripts.has(x)) {
      try {
        transcripts.set(x, readTranscript(layout, x));
      } catch {
        transcripts.set(x, null);
      }
    }
    return transcripts.get(x) ?? null;
  };
  return ids.map((x) => {
    const t = load(x);
    const from = t?.header.resumed_from ?? resumedFromOf(layout, x);
    const prev = from ? load(from) : null;
    return {
      id: x,
      resumedFrom: from,
      transcript: t,
      inherited: t && prev ? inheritedCount(prev.entries, t.entries) : 0,
    };
  });
}

/**
 * How many of `next`'s first entries are the copy of `prev`'s conversation made at resume
 * (everything but its end line, in order). Compared by content, so a transcript that was not
 * seeded that way inherits nothing and is shown whole.
 */
export function inheritedCount(prev: readonly TranscriptEntry[], next: readonly TranscriptEntry[]): number {
  const copied = prev.filter((e) => e.type !== 'end');
  let n = 0;
  while (n < copied.length && n < next.length && sameEntry(copied[n]!, next[n]!)) n++;
  return n === copied.length ? n : 0;
}

function sameEntry(a: TranscriptEntry, b: TranscriptEntry): boolean {
  const { seq: _s1, ts: _t1, ...x } = a;
  const { seq: _s2, ts: _t2, ...y } = b;
  return JSON.stringify(x) === JSON.stringify(y);
}

function metaNames(layout: Layout): string[] {
  try {
    return readdirSync(layout.transcriptsDir).filter((n) => !n.startsWith('.') && n.endsWith('.meta.json'));
  } catch (err) {
    if (isErrno(err, 'ENOENT')) return [];
    throw err;
  }
}
