import { audit } from '../audit/audit.js';
import type { Config } from '../config/schema.js';
import { recordLiveness } from '../fleet/liveness.js';
import type { AgentRecord } from '../fleet/record.js';
import { isTerminal } from '../fleet/record-status.js';
import { subtreeRecords } from '../fleet/live.js';
import { endRecord, readRecord } from '../fleet/registry.js';
import type { Layout } from '../layout/layout.js';
import type { CancelResult } from './far-cancel.js';
import { markCancelKill } from './cancel-kill.js';
import { completionSent, sendCompletionOnce } from './completion.js';
import { reconcileDead } from './reconcile.js';
import { harnessRunning, signalAgent } from './signal.js';
import { sleep } from '../sleep.js';

/**
 * `flotilla cancel` (§5.8): SIGTERM to the harness, which aborts its model call and tool,
 * ends `cancelled`, cancels its foreground children, sends its completion and runs its stop
 * hooks. Whatever is still alive after `limits.cancel_grace_secs` gets SIGKILL and is then
 * ended `cancelled` by the reaper path. `tree` takes the whole subtree, background
 * children included. When an agent ends, whichever way, its foreground children on other
 * hosts are cancelled there as well (far-cancel.ts `cancelFarChildren`).
 */

export type { CancelResult };

export interface CancelOptions {
  tree?: boolean;
  /** Who asks, for the audit trail (an agent id or `human`). */
  by?: string;
  /** Override of limits.cancel_grace_secs, in ms. */
  graceMs?: number;
}

const POLL_MS = 50;

/**
 * Cancels `target` and what a cancel of it reaches (its foreground descendants, or with `tree`
 * its whole subtree) on every host: this host's by signal, on a `nats://` bus other hosts'
 * through `flotilla cancel` there (far-cancel.ts). The one cancel of every path — the CLI, the
 * dashboard's `c`, the pane's `/agent cancel`, `cancel_agent` and the MCP tool. Returns the
 * ids that were still running, and one note per host or bus it could not reach.
 */
export async function cancelAgent(
  layout: Layout,
  config: Config,
  target: AgentRecord,
  opts: CancelOptions = {},
): Promise<CancelResult> {
  if (config.fleet.bus === 'maildir') return { cancelled: await cancelHere(layout, config, target, opts), notes: [] };
  const far = await import('./far-cancel.js');
  // Read before this host's part: the cascade of an ending may reach them first.
  const found = await far.farDescendants(layout, config, target, opts);
  const here = await cancelHere(layout, config, target, opts);
  const there = await far.cancelFar(layout, config, found.records, { tree: opts.tree, by: opts.by ?? 'human' });
  return { cancelled: [...new Set([...here, ...there.cancelled])], notes: [...found.notes, ...there.notes] };
}

/** This host's part of a cancel: the ids that were still running. */
async function cancelHere(layout: Layout, config: Config, target: AgentRecord, opts: CancelOptions): Promise<string[]> {
  // The target's subtree only (children index): cost does not grow with the fleet's history.
  const below = subtreeRecords(layout, target.id);
  const records = [target, ...below];
  const byId = new Map(records.map((r) => [r.id, r]));
  // Foreground children get SIGTERM from their own parent; signal the rest directly.
  const covered = (r: AgentRecord): boolean => {
    const parent = r.parentId ? byId.get(r.parentId) : undefined;
    return !r.background && !!parent && recordLiveness(parent) === 'live';
  };
  const watched = opts.tree ? [target, ...below] : [target, ...foregroundBelow(target.id, records)];
  const direct = opts.tree ? [target, ...below.filter((r) => !covered(r))] : [target];
  const hit = watched.filter((r) => ['live', 'pending'].includes(recordLiveness(r))).map((r) => r.id);

  for (const rec of direct) {
    const live = recordLiveness(rec);
    if (live === 'live' && signalAgent(rec, 'SIGTERM'))
      audit(layout, { event: 'cancel', agent: rec.id, by: opts.by ?? 'human', tree: !!opts.tree });
    else if (live === 'pending') await cancelPending(layout, config, rec, opts.by ?? 'human');
  }

  const graceMs = opts.graceMs ?? config.limits.cancel_grace_secs * 1000;
  const ids = watched.map((r) => r.id);
  const end = Date.now() + graceMs;
  let alive = stillAlive(layout, ids);
  while (alive.length > 0 && Date.now() < end) {
    await sleep(POLL_MS);
    alive = stillAlive(layout, ids);
  }
  const reason = `cancelled (SIGKILL after ${Math.round(graceMs / 1000)} s grace)`;
  for (const r of alive) markCancelKill(layout, r.id, reason);
  const killed = alive.filter((r) => signalAgent(r, 'SIGKILL')).map((r) => r.id);
  if (killed.length) {
    await waitDead(layout, killed);
    await reconcileDead(layout, config, { ids: killed }, { cancelled: reason });
  }
  await reconcileDead(layout, config, { ids });
  await completionsDelivered(layout, hit);
  return hit;
}

/** How long a cancel waits for a completion another process is still delivering. */
const COMPLETION_WAIT_MS = 15_000;

/**
 * Returns once each ended agent of `ids` has its task's completion delivered (or after
 * COMPLETION_WAIT_MS): another process may hold the delivery's turn as the cancel ends (the
 * pane's reaper, a parent's harness), and the reconcile above then leaves it to them. So what
 * the person reads right after `flotilla cancel` holds every completion (§5.7).
 */
async function completionsDelivered(layout: Layout, ids: readonly string[]): Promise<void> {
  const owed = () =>
    ids.filter((id) => {
      const rec = readRecord(layout, id);
      return !!rec && isTerminal(rec.status) && !completionSent(layout, id, rec.lastTask?.task ?? rec.task);
    });
  const end = Date.now() + COMPLETION_WAIT_MS;
  while (owed().length > 0 && Date.now() < end) await sleep(POLL_MS);
}

/** Foreground descendants: the ones a cancel cascades to. */
function foregroundBelow(id: string, records: readonly AgentRecord[]): AgentRecord[] {
  const out: AgentRecord[] = [];
  let frontier = [id];
  while (frontier.length > 0) {
    const next = records.filter((r) => !r.background && r.parentId !== null && frontier.includes(r.parentId));
    out.push(...next);
    frontier = next.map((r) => r.id);
  }
  return out;
}

function stillAlive(layout: Layout, ids: readonly string[]): AgentRecord[] {
  return ids.flatMap((id) => {
    const rec = readRecord(layout, id);
    return rec && harnessRunning(rec) ? [rec] : [];
  });
}

async function waitDead(layout: Layout, ids: readonly string[]): Promise<void> {
  const end = Date.now() + 2_000;
  while (stillAlive(layout, ids).length > 0 && Date.now() < end) await sleep(20);
}

/** A child not started yet: its record ends now, and its harness will find it no longer fresh and exit. */
async function cancelPending(layout: Layout, config: Config, rec: AgentRecord, by: string): Promise<void> {
  const reason = `cancelled before it started (by ${by})`;
  const { record, ended } = endRecord(layout, rec.id, { status: 'cancelled', exitReason: reason });
  if (!ended) return;
  audit(layout, { event: 'cancel', agent: rec.id, by });
  await sendCompletionOnce(
    layout,
    record,
    {
      task: record.task,
      status: 'cancelled',
      exitReason: reason,
      finishedAt: record.finishedAt ?? new Date().toISOString(),
      outputPath: null,
    },
    { maxBodyBytes: config.inbox.max_body_bytes },
  );
}
