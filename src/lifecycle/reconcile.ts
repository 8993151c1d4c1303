import { killLeftoverGroups } from './tool-groups.js';
import { constants } from 'node:os';
import { audit } from '../audit/audit.js';
import type { Config } from '../config/schema.js';
import { recordLiveness } from '../fleet/liveness.js';
import { isTerminal } from '../fleet/record-status.js';
import type { AgentRecord, TaskResult } from '../fleet/record.js';
import { liveRecords } from '../fleet/live.js';
import { endRecord, readRecord } from '../fleet/registry.js';
import { heldSlots } from '../fleet/slots.js';
import { auditHookRun } from '../hooks/audit-run.js';
import type { Layout } from '../layout/layout.js';
import { sleep } from '../sleep.js';
import { cancelKillReason } from './cancel-kill.js';
import { claimOnce } from './once.js';
import { reopenClaims } from './reopen-claims.js';
import { clearFinishing, finishingIds, markFinishing, releaseReserve } from './reserve.js';
import { harnessRunning, terminateForegroundChildren } from './signal.js';

/**
 * The crash path of §5.7: an agent whose harness died without ending its record gets its
 * terminal state, its parent one completion, its stop hooks one run — exactly once,
 * whichever of the pane-died hook (`flotilla reap`), the parent's liveness check, or any
 * `flotilla` command gets there first. Exactly-once comes from the O_EXCL markers of
 * `sendCompletionOnce` / `stopHookOnce`; the record write itself is idempotent.
 */

export interface ReconcileFilter {
  ids?: readonly string[];
  /** Only the children of this agent (a parent's check). */
  parentId?: string;
  /**
   * The tmux pane that died (`reap --pane`): its agent is dead even if it never wrote a pid.
   * `exitStatus` is the harness's, from the pane's own sh (spawn/pane-command.ts), which
   * runs the reaper before tmux has marked the pane dead.
   */
  pane?: { paneId: string; socket?: string | null | undefined; exitStatus?: number | undefined };
  /** The non-terminal records, when the caller has read them already (status). */
  records?: readonly AgentRecord[];
}

export interface ReconcileOptions {
  /** End as cancelled instead of crashed (a cancel that needed SIGKILL). */
  cancelled?: string;
}

/**
 * A record still pending this long, with its slot free, lost its spawner. (A spawner waits up to
 * 60 s for the handoff, but holds the slot all that time, so the held-slot check below covers it.)
 */
export const PENDING_GRACE_MS = 30_000;

/** Ends every dead, non-terminal record matching `filter`; returns the records this call ended. */
export async function reconcileDead(
  layout: Layout,
  config: Config,
  filter: ReconcileFilter = {},
  opts: ReconcileOptions = {},
): Promise<AgentRecord[]> {
  const out: AgentRecord[] = [];
  // Named agents are read alone (a parent's check of its children); otherwise the live index
  // (only a non-terminal record can be dead and unreaped).
  const records = filter.ids
    ? filter.ids.map((id) => readRecordSafe(layout, id)).filter((r): r is AgentRecord => r !== undefined)
    : (filter.records ?? liveRecords(layout));
  const exitStatus = filter.pane?.exitStatus;
  for (const rec of records) {
    if (isTerminal(rec.status)) continue;
    if (filter.ids && !filter.ids.includes(rec.id)) continue;
    if (filter.parentId !== undefined && rec.parentId !== filter.parentId) continue;
    const paneDied =
      !!filter.pane &&
      rec.tmux?.paneId === filter.pane.paneId &&
      (!filter.pane.socket || !rec.tmux.socket || filter.pane.socket === rec.tmux.socket);
    if (filter.pane && !paneDied) continue;
    // A cancel's SIGKILL ends it cancelled, whoever reaps it first (cancel-kill.ts).
    const cancelled = opts.cancelled ?? cancelKillReason(layout, rec.id);
    // How it ended, when known here, is not asked of tmux: a cancel's SIGKILL, or the status the
    // pane's sh saw (tmux marks that pane dead only once this reaper is done).
    const known = cancelled ?? (exitStatus === undefined ? undefined : statusEnd(exitStatus));
    const why = await deathOf(layout, rec, paneDied, known);
    if (why === null) continue;
    const ended = await endDead(layout, config, rec, cancelled ?? why, cancelled ? 'cancelled' : 'crashed');
    if (ended) out.push(ended);
  }
  await finishAbandoned(layout, config, filter);
  return out;
}

/**
 * Endings a harness began and did not finish (killed between its terminal record and its
 * last step): the record is terminal, so nothing above looks at it; the finishing mark says
 * a completion or the stop hooks may still be owed, and endDead sends what is (once).
 */
async function finishAbandoned(layout: Layout, config: Config, filter: ReconcileFilter): Promise<void> {
  for (const id of finishingIds(layout)) {
    if (filter.ids && !filter.ids.includes(id)) continue;
    const rec = readRecordSafe(layout, id);
    if (!rec) {
      clearFinishing(layout, id);
      continue;
    }
    if (!isTerminal(rec.status) || harnessRunning(rec)) continue;
    if (filter.parentId !== undefined && rec.parentId !== filter.parentId) continue;
    await endDead(layout, config, rec, rec.exitReason ?? rec.status);
  }
}

function readRecordSafe(layout: Layout, id: string): AgentRecord | undefined {
  try {
    return readRecord(layout, id);
  } catch {
    return undefined;
  }
}

/** Why the agent is dead (`known`, else how its pane ended), or null while it runs (or may still be starting). */
async function deathOf(layout: Layout, rec: AgentRecord, paneDied: boolean, known?: string): Promise<string | null> {
  let live = recordLiveness(rec);
  // tmux fires pane-died at the terminal's EOF, which a killed process reaches while it is
  // still exiting (not yet a zombie): give it a moment to be seen dead.
  for (let i = 0; paneDied && live === 'live' && i < 40; i++) {
    await sleep(50);
    live = recordLiveness(rec);
  }
  if (live === 'live' || live === 'ended') return null;
  if (live === 'pending') {
    if (!paneDied) {
      if (Date.now() - Date.parse(rec.createdAt) < PENDING_GRACE_MS) return null;
      // A held slot means its spawner or harness may still be at work.
      if (rec.slot !== null && (await heldSlots(layout, rec.slot + 1)).includes(rec.slot)) return null;
      return 'never started (its spawner is gone)';
    }
    return `exited before starting (${known ?? (await paneEnd(rec))})`;
  }
  if (known !== undefined) return known;
  return rec.tmux ? await paneEnd(rec) : 'process died';
}

const SIGNAL_NAMES = new Map(Object.entries(constants.signals).map(([name, n]) => [n, name]));

/** How a pane's process ended, from tmux: `killed (SIGKILL)`, `exited with status 3`, `window closed`. */
async function paneEnd(rec: AgentRecord): Promise<string> {
  if (!rec.tmux) return 'process died';
  const { Tmux } = await import('../tmux/client.js');
  const tmux = new Tmux({ socket: rec.tmux.socket });
  // The pid is already gone; tmux learns of it a moment later (SIGCHLD), so give it up to 2 s.
  const end = Date.now() + 2_000;
  let fields: string[];
  let nudged = false;
  for (;;) {
    const r = await tmux
      .exec(['display-message', '-p', '-t', rec.tmux.paneId, '#{pane_dead} #{pane_dead_status} #{pane_dead_signal}'])
      .catch(() => null);
    if (!r || r.code !== 0) return 'window closed';
    fields = r.stdout.trim().split(' ');
    if ((fields[0] === '1' && (fields[1] || fields[2])) || Date.now() > end) break;
    if (!nudged) {
      nudged = true;
      await nudgeTmux(tmux);
    }
    await sleep(50);
  }
  const [dead, status, signal] = fields;
  if (dead !== '1') return 'process died';
  if (signal) return killedBy(Number(signal));
  return status ? statusEnd(Number(status)) : 'process died';
}

/** An exit status as a reason; a signal death seen through a shell (the pane's sh) reads as 128+N. */
function statusEnd(code: number): string {
  if (code > 128 && code < 128 + 65) return killedBy(code - 128);
  return `exited with status ${code}`;
}

/**
 * A tmux built with libutempter can miss a pane process's SIGCHLD (its handler is swapped
 * in while a pane is being recorded), leaving the process a zombie, the pane not dead and
 * pane-died never run (github.com/tmux/tmux/issues/311). Another SIGCHLD makes tmux reap it.
 */
export async function nudgeTmux(tmux: {
  exec(args: string[]): Promise<{ code: number; stdout: string }>;
}): Promise<void> {
  const r = await tmux.exec(['display-message', '-p', '#{pid}']).catch(() => null);
  const pid = r && r.code === 0 ? Number(r.stdout.trim()) : NaN;
  if (Number.isInteger(pid) && pid > 1) {
    try {
      process.kill(pid, 'SIGCHLD');
    } catch {
      /* gone */
    }
  }
}

function killedBy(signal: number): string {
  return `killed (${SIGNAL_NAMES.get(signal) ?? `signal ${signal}`})`;
}

/**
 * Writes the terminal state of one dead agent and does the rest of an ending: the transcript
 * sidecar, completion (when a task was open), stop hooks, its foreground children, the
 * audit line. Returns the ended record, or null when another path had already ended it.
 */
export async function endDead(
  layout: Layout,
  config: Config,
  rec: AgentRecord,
  reason: string,
  status: 'crashed' | 'cancelled' | 'refused' | 'failed' = 'crashed',
): Promise<AgentRecord | null> {
  releaseReserve(layout, rec.id);
  markFinishing(layout, rec.id);
  // A persistent agent that had answered its task and sat idle did nothing wrong.
  const taskDone = rec.lastTask !== null && rec.lastTask.task >= rec.task;
  const finalStatus = taskDone && status === 'crashed' ? 'completed' : status;
  const exitReason = taskDone && status === 'crashed' ? 'exited while idle' : reason;
  const result: TaskResult | null = taskDone
    ? null
    : { task: rec.task, status, exitReason, finishedAt: new Date().toISOString(), outputPath: null };
  let ended;
  try {
    ended = endRecord(layout, rec.id, { status: finalStatus, exitReason, ...(result ? { lastTask: result } : {}) });
  } catch {
    return null; // Vanished (gc) meanwhile.
  }
  const final = ended.record;
  await reopenClaims(layout, rec.id, final.exitReason ?? final.status);
  // The sidecar says how it ended before the parent hears of it (a parent may read the transcript on the completion).
  try {
    const { tryReadMeta, updateMeta } = await import('../transcript/meta.js');
    if (tryReadMeta(layout, rec.id))
      updateMeta(layout, rec.id, {
        status: final.status,
        exit_reason: final.exitReason,
        finished_at: final.finishedAt,
      });
  } catch {
    // A damaged sidecar must not stop the reaping; the registry holds the truth.
  }
  // The open task's completion, or one a harness owed when it died (after the terminal write,
  // or between a persistent agent's answer and its completion): the marker decides.
  const task = final.lastTask ?? result;
  if (task) {
    // Loaded here: a status or watch that finds nobody dead never loads the message code.
    const { completionSent, sendCompletionOnce } = await import('./completion.js');
    if (!completionSent(layout, rec.id, task.task)) {
      await sendCompletionOnce(layout, final, task, {
        text: `Agent ${rec.id} ${task.status}: ${task.exitReason ?? ''}`,
        maxBodyBytes: config.inbox.max_body_bytes,
      });
    }
  }
  const [{ stopHookOnce }, { runLifecycleHooks }] = await Promise.all([
    import('../hooks/stop-once.js'),
    import('../hooks/run-hooks.js'),
  ]);
  await stopHookOnce(layout, rec.id, () =>
    runLifecycleHooks('stop', config.hooks.stop, {
      agentId: rec.id,
      agentName: rec.name,
      parentId: rec.parentId,
      cwd: rec.cwd,
      status: final.status,
      exitReason: final.exitReason,
      onRun: (r) => auditHookRun(layout, rec.id, r),
    }),
  );
  terminateForegroundChildren(layout, rec.id, 'reaper');
  // And the ones other hosts run (§5.8), asked there (an agent that never ran has none).
  if (config.fleet.bus !== 'maildir' && status !== 'refused' && status !== 'failed')
    await (await import('./far-cancel.js')).cancelFarChildren(layout, config, final);
  // Its running shell command lives on in its own process group unless we end it.
  killLeftoverGroups(layout, rec.id);
  clearFinishing(layout, rec.id);
  // A harness that ended itself just as it died (seen here as dead) is no reaping; a refusal or failed start is none
  // either.
  if (!ended.ended || status === 'refused' || status === 'failed' || !claimOnce(layout.marker(`${rec.id}.reaped`)))
    return null;
  audit(layout, { event: 'reap', agent: rec.id, status: final.status, reason: final.exitReason });
  return final;
}
