import type { AgentRecord } from '../fleet/record.js';
import type { Layout } from '../layout/layout.js';
import { standings } from './ahead-behind.js';
import { branchTips } from './branch-state.js';
import { historyIdentity } from './branch-cache.js';
import { alternateObjects, git } from './git.js';
import { readTip, stagedObjects } from './import-branch.js';
import { type Counted, readStandings, standingKey, writeStandings } from './standing-cache.js';
import { branchOf } from './work.js';

/** An agent's branch against its base branch now (`status`, the dashboard). */
export interface Standing {
  branch: string;
  /** The branch its worktree was made from (null: a detached HEAD). */
  base: string | null;
  ahead: number;
  behind: number;
}

/**
 * The standing of each agent on a branch among `records` (in its worktree, or in place),
 * from one ref read and one history read for them all (`standings`), not a `rev-list` per
 * branch. An agent whose branch is gone is left out.
 *
 * An in-place agent's commits are counted, not brought in (docs/security.md, "Commits in the
 * sandbox"): `status` runs often, an import is several git processes per agent. Its tip is read
 * from its own git dir as the import reads it (`readTip`), its objects staged into a folder of
 * the host's and read through it as an alternate; a tip the host's git cannot read as a
 * commit there counts as the branch in the repository.
 */
export async function branchStanding(layout: Layout, records: readonly AgentRecord[]): Promise<Map<string, Standing>> {
  const out = new Map<string, Standing>();
  const withBase = records.filter((r) => r.base);
  if (withBase.length === 0) return out;
  const tips = await branchTips(layout);
  const mine = withBase.flatMap((r) => {
    const own = tips.get(`refs/heads/${branchOf(r.id)}`);
    const target = (r.base!.branch ? tips.get(`refs/heads/${r.base!.branch}`) : undefined) ?? r.base!.commit;
    // Gone (gc removed it, or the person deleted it): its own git dir's tip is not shown either.
    if (!own) return [];
    const newer = r.worktree ? null : readTip(layout.inPlaceGitDir(r.id), r.id);
    return [{ r, own, target, newer: newer !== own ? newer : null }];
  });
  // Tips counted at an earlier refresh need neither their objects staged nor a git process.
  const history = historyIdentity(layout);
  const known = history === null ? new Map<string, Counted>() : readStandings(layout.inPlaceStandingCache, history);
  const kept = new Map<string, Counted>();
  const counted = new Map<(typeof mine)[number], Counted>();
  for (const m of mine) {
    const hit = m.newer ? known.get(standingKey(m.r.id, m.newer, m.target)) : undefined;
    if (!hit) continue;
    counted.set(m, hit);
    kept.set(standingKey(m.r.id, m.newer!, m.target), hit);
  }
  const asked = mine.filter((m) => !counted.has(m));
  const staged = asked.flatMap(({ r, newer }) => (newer ? [stagedObjects(layout, r.id)] : []));
  try {
    const env = staged.length ? { ...process.env, ...alternateObjects(staged.map((s) => s.objects)) } : undefined;
    const fresh = asked.filter((m) => m.newer);
    if (fresh.length) {
      // One read for them all: a tip whose object is not there (a link left out, another repository's) is no tip.
      const kinds = await git(
        layout.project,
        ['cat-file', '--batch-check=%(objecttype)'],
        env,
        fresh.map((m) => `${m.newer}\n`).join(''),
      );
      const types = kinds.stdout.split('\n');
      fresh.forEach((m, k) => {
        if (types[k] === 'commit') m.own = m.newer!;
      });
    }
    const counts = asked.length ? await standings(layout.project, asked, env) : [];
    asked.forEach((m, k) => {
      const c = { ahead: counts[k]!.ahead, behind: counts[k]!.behind };
      counted.set(m, c);
      if (m.newer && m.own === m.newer) kept.set(standingKey(m.r.id, m.newer, m.target), c);
    });
    for (const m of mine) out.set(m.r.id, { branch: branchOf(m.r.id), base: m.r.base!.branch, ...counted.get(m)! });
    if (history !== null && (kept.size !== known.size || [...kept.keys()].some((k) => !known.has(k))))
      writeStandings(layout.inPlaceStandingCache, history, kept);
  } finally {
    for (const s of staged) s.drop();
  }
  return out;
}

/** How a row shows it: `⎇ flotilla/x ↑2 ↓1`. */
export const standingMark = (s: Standing): string => `⎇ ${s.branch} ↑${s.ahead} ↓${s.behind}`;
