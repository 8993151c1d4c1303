import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync, renameSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type { Layout } from '../layout/layout.js';
import { type BranchOf, type BranchState, branchStates } from './branch-state.js';
import { fileId, gitEnv, sharedFiles } from './status-cache.js';

/**
 * `branchStates` for `review`, answered from the last review's while every branch tip, every
 * agent's base and what git reads to walk history and merge (config, packed and replace refs,
 * grafts, a shallow clone's list, the git variables) are what they were then: a commit never
 * changes, so the same tips give the same counts, files and conflicts, and the three git
 * processes of a review's branch read are skipped (docs/benchmarks-work.md, "Review of 50 worktree
 * agents"). One entry, the last review's; `merge` and `gc` always ask git.
 */
export async function cachedBranchStates(
  layout: Layout,
  items: readonly BranchOf[],
  tips: ReadonlyMap<string, string>,
): Promise<BranchState[]> {
  const file = layout.reviewBranchCache;
  const key = branchKey(layout, items, tips);
  const cached = key ? readEntry(file) : null;
  if (cached && cached.key === key && cached.states.length === items.length) return cached.states;
  const states = await branchStates(layout, items, tips);
  if (key) writeEntry(file, { key, states });
  return states;
}

interface Entry {
  key: string;
  states: BranchState[];
}

/** The key; null where the project's git dir is not a folder of its own (the project is a worktree). */
function branchKey(layout: Layout, items: readonly BranchOf[], tips: ReadonlyMap<string, string>): string | null {
  const history = historyIdentity(layout);
  if (history === null) return null;
  const h = createHash('sha1');
  h.update(JSON.stringify([[...tips].sort(), items.map((i) => [i.branch, i.base.branch, i.base.commit]), history]));
  return h.digest('hex');
}

/**
 * What git reads, beside the commits themselves, to walk history and merge: the repository's
 * config, packed and replace refs, grafts, a shallow clone's list, the person's config files
 * and the git variables, as one string of identities. The same commits with the same identity
 * give the same counts, files and conflicts. Null where the project's git dir is not a folder
 * of its own (the project is a worktree).
 */
export function historyIdentity(layout: Layout): string | null {
  const dotGit = join(layout.project, '.git');
  try {
    if (!statSync(dotGit).isDirectory()) return null;
  } catch {
    return null;
  }
  const read = ['config', 'packed-refs', join('refs', 'replace'), join('info', 'grafts'), 'shallow'].map((f) =>
    join(dotGit, f),
  );
  return [...read, ...sharedFiles()].map((f) => `${f}\0${fileId(f) ?? '-'}\0`).join('') + gitEnv();
}

function readEntry(file: string): Entry | null {
  try {
    const parsed = JSON.parse(readFileSync(file, 'utf8')) as { v?: unknown } & Partial<Entry>;
    if (parsed.v !== 1 || typeof parsed.key !== 'string' || !Array.isArray(parsed.states)) return null;
    return { key: parsed.key, states: parsed.states };
  } catch {
    return null;
  }
}

function writeEntry(file: string, entry: Entry): void {
  const tmp = `${file}.${process.pid}.tmp`;
  try {
    mkdirSync(dirname(file), { recursive: true });
    writeFileSync(tmp, JSON.stringify({ v: 1, ...entry }));
    renameSync(tmp, file);
  } catch {
    // A cache that cannot be written only costs the next review its git runs.
  }
}
