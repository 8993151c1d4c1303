import { mkdirSync, readdirSync, renameSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { audit } from '../audit/audit.js';
import type { BusGcResult } from '../bus/types.js';
import type { Config } from '../config/schema.js';
import { errorMessage } from '../errors.js';
import { recordLiveness } from '../fleet/liveness.js';
import { isTerminal } from '../fleet/record-status.js';
import type { AgentRecord } from '../fleet/record.js';
import { corruptDir, listRecords } from '../fleet/registry.js';
import { TREE_SPAWNS_PREFIX, type Layout } from '../layout/layout.js';
import { reconcileDead } from './reconcile.js';
import { applyFleetRetention } from '../transcript/fleet-retention.js';
import type { RetentionResult } from '../transcript/retention.js';
import { isFleetWorktree, removeWorktree } from '../work/worktree.js';
import { mergedRef } from '../work/far-branch.js';
import { branchStates } from '../work/branch-state.js';
import { git, gitWhy } from '../work/git.js';
import { agentWorks, branchOf } from '../work/work.js';

/**
 * `flotilla gc`: what finished agents leave behind. Dead panes of finished agents are killed;
 * worktrees under state/worktrees/ that no live agent works in are removed with their
 * branches once their work is merged (§12; an unmerged one only when forced); records of agents finished at least
 * `olderThanMs` ago go, with their task file and
 * once-markers; spawn counters of trees with no record left go; transcript and output
 * retention (§8) runs. Inboxes stay: unread mail is for a person to read or delete. On a
 * `nats://` bus the same records, their once-markers and the trees nothing belongs to any more
 * leave the bus too (Bus.gc); a bus that cannot be reached skips that part, and says so.
 */

export interface GcResult {
  panes: string[];
  worktrees: string[];
  /** Branches `flotilla/<id>` deleted with their merged worktrees (none with `keepBranches`). */
  branches: string[];
  /** Finished agents whose work is not in their base branch: worktree and branch kept (`force` removes them). */
  /** Kept work: its branch and its worktree (`inPlace`: its own git dir); `unimported`, commits only there. */
  unmerged: {
    id: string;
    branch: string;
    ahead: number;
    uncommitted: number;
    inPlace: boolean;
    unimported?: string;
  }[];
  records: string[];
  markers: number;
  /** Corrupt records set aside in state/agents/corrupt/ (ids). */
  corrupt: string[];
  retention: RetentionResult;
  problems: string[];
  /** On a `nats://` bus, what left it; null on `maildir`. */
  bus: BusGcPart | null;
}

/** The bus's part of a gc: what was removed from it, or why it was skipped (nothing removed, the local part done). */
export type BusGcPart = ({ url: string; skipped: null } & BusGcResult) | { url: string; skipped: string };

export async function gcFleet(
  layout: Layout,
  config: Config,
  opts: { olderThanMs?: number; now?: number; keepBranches?: boolean; force?: boolean } = {},
): Promise<GcResult> {
  const now = opts.now ?? Date.now();
  const result: GcResult = {
    panes: [],
    worktrees: [],
    branches: [],
    unmerged: [],
    records: [],
    markers: 0,
    corrupt: [],
    retention: { transcripts: [], outputs: [], problems: [] },
    problems: [],
    bus: null,
  };
  await reconcileDead(layout, config);
  const records = listRecords(layout, (c) => setAside(layout, c.id, result));
  const finished = records.filter((r) => isTerminal(r.status));

  await killDeadPanes(finished, result);

  await removeEndedWork(layout, records, finished, opts, result);

  // An unmerged agent's record stays too: `merge` and a later `gc --force` find its work through it.
  const kept = new Set(result.unmerged.map((u) => u.id));
  const old = finished.filter(
    (r) => !kept.has(r.id) && now - Date.parse(r.finishedAt ?? r.createdAt) >= (opts.olderThanMs ?? 0),
  );
  const markerNames = safeList(layout.markersDir);
  const onBus = config.fleet.bus !== 'maildir';
  const { oweBusGc } = onBus ? await import('../bus/gc-owed.js') : { oweBusGc: undefined };
  for (const r of old) {
    try {
      // Owed to the bus before the file goes: a gc that cannot reach it leaves it to the next.
      oweBusGc?.(layout, r.id);
      rmSync(layout.registryFile(r.id), { force: true });
      rmSync(layout.taskFile(r.id), { force: true });
      rmSync(layout.stopHookMarker(r.id), { force: true });
      for (const m of markerNames.filter((n) => n.startsWith(`${r.id}.`))) {
        rmSync(layout.marker(m), { force: true });
        result.markers++;
      }
      result.records.push(r.id);
    } catch (err) {
      result.problems.push(`could not remove the record of ${r.id}: ${errorMessage(err)}`);
    }
  }
  const removed = new Set(result.records);
  const trees = new Set(records.filter((r) => !removed.has(r.id)).map((r) => r.rootId));
  for (const dir of safeList(layout.slotsDir).filter((n) => n.startsWith(TREE_SPAWNS_PREFIX))) {
    const rootId = dir.slice(TREE_SPAWNS_PREFIX.length);
    if (!trees.has(rootId)) rmSync(layout.treeSpawns(rootId), { recursive: true, force: true });
  }

  if (onBus) result.bus = await gcBus(layout, config, now);
  result.retention = applyFleetRetention(layout, config, now);
  audit(layout, {
    event: 'gc',
    agent: 'human',
    records: result.records.length,
    panes: result.panes.length,
    worktrees: result.worktrees.length,
    transcripts: result.retention.transcripts.length,
    ...(result.bus?.skipped === null
      ? { bus_records: result.bus.records.length, bus_trees: result.bus.trees.length }
      : {}),
  });
  return result;
}

/**
 * Removes ended agents' worktrees (§12) and, unless kept, their branches once their work is
 * merged; an unmerged one stays, worktree and branch, unless forced.
 */
async function removeEndedWork(
  layout: Layout,
  records: readonly AgentRecord[],
  finished: readonly AgentRecord[],
  opts: { keepBranches?: boolean; force?: boolean },
  result: GcResult,
): Promise<void> {
  const liveCwds = new Set(records.filter((r) => recordLiveness(r) !== 'ended').map((r) => r.cwd));
  // A worktree agent's worktree and branch; an in-place agent's branch and own git dir (work/in-place.ts).
  const ended = finished.flatMap((r): { r: AgentRecord; worktree: string | null }[] => {
    if (!r.worktree) return r.base ? [{ r, worktree: null }] : [];
    return isFleetWorktree(layout, r.worktree) && !liveCwds.has(r.worktree) ? [{ r, worktree: r.worktree }] : [];
  });
  // Every branch read together: one ref read and one history read, whatever their number (work/branch-state.ts).
  const works = await agentWorks(
    layout,
    ended.map((e) => e.r),
  );
  const onBranch = works.flatMap((w) => (w.kind === 'branch' ? [w] : []));
  const read = onBranch.length ? await branchStates(layout, onBranch) : [];
  const states = new Map(read.map((st, k) => [onBranch[k]!.id, st]));
  for (const [k, { r, worktree }] of ended.entries()) {
    // Work not in its base branch yet stays, worktree and branch, unless forced (§12).
    const work = works[k]!;
    const state = states.get(r.id);
    const uncommitted = work.kind === 'branch' ? work.uncommitted : 0;
    // Merged on another host (its merge told this repository, far-branch.ts): merged, unless the branch moved on since.
    const mergedThere = state?.exists && state.ahead > 0 && !uncommitted && (await mergedElsewhere(layout, r.id));
    const ahead = state?.exists && !mergedThere ? state.ahead : 0;
    // In place, commits not brought into the repository (work/import-branch.ts) are only in its git dir.
    const unimported = work.kind === 'branch' ? work.unimported : undefined;
    if ((ahead > 0 || uncommitted > 0 || unimported) && !opts.force) {
      const kept = { id: r.id, branch: branchOf(r.id), ahead, uncommitted, inPlace: !worktree };
      result.unmerged.push(unimported ? { ...kept, unimported } : kept);
      continue;
    }
    if (worktree) {
      try {
        await removeWorktree(layout, worktree);
        result.worktrees.push(worktree);
      } catch (err) {
        if (!/is not a working tree|No such file/i.test(errorMessage(err))) result.problems.push(errorMessage(err));
      }
    } else rmSync(layout.inPlaceGitDir(r.id), { recursive: true, force: true });
    if (state?.exists && !opts.keepBranches) {
      const d = await git(layout.project, ['branch', '-D', branchOf(r.id)]);
      if (d.code === 0) result.branches.push(branchOf(r.id));
      else result.problems.push(`could not delete ${branchOf(r.id)}: ${gitWhy(d)}`);
    }
    if (mergedThere) await git(layout.project, ['update-ref', '-d', mergedRef(r.id)]);
  }
}

/** Whether another host merged agent `id`'s branch as it is now: its tip is in the commit that host said it merged. */
async function mergedElsewhere(layout: Layout, id: string): Promise<boolean> {
  const r = await git(layout.project, ['merge-base', '--is-ancestor', branchOf(id), mergedRef(id)]);
  return r.code === 0;
}

/**
 * The bus's part, after the registry's: the records removed here (this run's, and any a run without the bus left owed).
 * Never throws.
 */
async function gcBus(layout: Layout, config: Config, now: number): Promise<BusGcPart> {
  const url = config.fleet.bus;
  try {
    const { busFor } = await import('../bus/open.js');
    return { url, skipped: null, ...(await busFor(layout, config).gc({ now })) };
  } catch (err) {
    return { url, skipped: errorMessage(err) };
  }
}

/**
 * Moves a registry file that cannot be read to state/agents/corrupt/ (kept for a person to
 * look at). Its harness, if one still runs, writes a fresh record with its end state.
 */
function setAside(layout: Layout, id: string, result: GcResult): void {
  try {
    mkdirSync(corruptDir(layout), { recursive: true });
    renameSync(layout.registryFile(id), join(corruptDir(layout), `${id}.${Date.now()}.json`));
    result.corrupt.push(id);
    audit(layout, { event: 'gc', agent: id, corrupt_record: true });
  } catch (err) {
    result.problems.push(`could not set aside the corrupt record of ${id}: ${errorMessage(err)}`);
  }
}

async function killDeadPanes(finished: readonly AgentRecord[], result: GcResult): Promise<void> {
  const bySocket = new Map<string | null, AgentRecord[]>();
  for (const r of finished) if (r.tmux) bySocket.set(r.tmux.socket, [...(bySocket.get(r.tmux.socket) ?? []), r]);
  if (bySocket.size === 0) return;
  const { Tmux } = await import('../tmux/client.js');
  for (const [socket, recs] of bySocket) {
    const tmux = new Tmux({ socket });
    const panes = await tmux.listPanes().catch(() => []);
    const dead = new Set(panes.filter((p) => p.dead).map((p) => p.paneId));
    for (const r of recs) {
      if (!dead.has(r.tmux!.paneId)) continue;
      try {
        await tmux.killPane(r.tmux!.paneId);
        result.panes.push(r.tmux!.paneId);
      } catch (err) {
        result.problems.push(`could not kill the dead pane of ${r.id}: ${errorMessage(err)}`);
      }
    }
  }
}

function safeList(dir: string): string[] {
  try {
    return readdirSync(dir);
  } catch {
    return [];
  }
}
