import { isTerminal, statusWithReason } from '../fleet/record-status.js';
import { readRecord } from '../fleet/registry.js';
import { existsSync } from 'node:fs';
import { audit } from '../audit/audit.js';
import type { Layout } from '../layout/layout.js';
import type { AgentRecord, TaskResult } from '../fleet/record.js';
import { doneOnce, isDone } from '../fleet/done-once.js';
import { messageFileName } from '../inbox/maildir.js';
import { summarize } from '../inbox/message.js';
import { releaseTaskLeases } from './reopen-claims.js';
import { remoteLineage } from '../hosts/lineage.js';
import type { DoneClaim, RecordsBus } from '../bus/types.js';
import { sleep } from '../sleep.js';
import { errorMessage } from '../errors.js';

/** How long a completion waits for an unreachable bus to answer for its fleet-wide marker. */
const MARKER_PATIENCE_MS = 10_000;

function completionMarker(layout: Layout, agentId: string, task: number): string {
  return layout.marker(`${agentId}.task-${task}.completion`);
}

/** True once the completion of `task` has been delivered. */
export function completionSent(layout: Layout, agentId: string, task: number): boolean {
  return isDone(completionMarker(layout, agentId, task));
}

/**
 * The last 10 characters of the completion id of `agentId`'s task `task`: fixed by agent and
 * task, so a reader that already has the result another way (wait_for_agents) can tell
 * which message in its inbox that result was, and claim it instead of showing it again.
 */
export function completionKey(agentId: string, task: number): string {
  return process
    .getBuiltinModule('node:crypto')
    .createHash('sha256')
    .update(`${agentId}\0${task}`)
    .digest('hex')
    .slice(0, 10);
}

/** True when `msg` is the completion of `agentId`'s task `task`. */
export function isCompletionOf(
  msg: { kind: string; from: string; id: string },
  agentId: string,
  task: number,
): boolean {
  return msg.kind === 'completion' && msg.from === agentId && msg.id.endsWith(completionKey(agentId, task));
}

/**
 * Who gets a completion: the parent; for a root, the person — or, for a scheduled run with a
 * `notify:` agent that is still live, that agent (a finished one would never read it).
 */
function recipient(layout: Layout, rec: AgentRecord): string {
  // The parent's inbox is named by its id: a record that exists but cannot be read (corrupt) still has one.
  if (rec.parentId) {
    if (existsSync(layout.registryFile(rec.parentId))) return rec.parentId;
    // A parent on another host (§17.5): the bus carries the completion to its harness there.
    return remoteLineage(layout, rec.id)?.parent.id === rec.parentId ? rec.parentId : 'human';
  }
  const notify = rec.schedule?.notify;
  if (!notify || notify === 'human') return 'human';
  const target = readRecord(layout, notify);
  return target && !isTerminal(target.status) ? notify : 'human';
}

/**
 * The completion message of `rec`'s task `result` to `to`: its id and file name fixed by
 * agent, task and end time, so sending it again finds it already delivered (§5.7). Also the
 * notice of a lost agent, sent by another host (lifecycle/lost.ts).
 */
export function completionDraft(
  rec: AgentRecord,
  result: TaskResult,
  to: string,
  opts: { text?: string; maxBodyBytes?: number } = {},
) {
  const answer = (opts.text ?? '').trim();
  const headline = `${rec.id} ${statusWithReason(result.status, result.exitReason)}`;
  const body = [
    `Agent ${rec.id} (${rec.name}) finished its task with status **${result.status}**${result.exitReason ? `: ${result.exitReason}` : ''}.`,
    result.outputPath ? `Final answer file: ${result.outputPath}` : '',
    answer
      ? `\n${answer.length > 4000 ? answer.slice(0, 4000) + `\n… (full answer in ${result.outputPath ?? 'the transcript'})` : answer}`
      : '',
  ]
    .filter(Boolean)
    .join('\n');
  const summaryText = answer ? `${headline}: ${answer.split('\n').find((l) => l.trim()) ?? ''}` : headline;
  // Fixed by the task's end time: a retry after a crash writes the same name, which deliver() finds.
  const ms = Date.parse(result.finishedAt) || 0;
  // Time-sortable like every id, with the task's key in place of the random part.
  const id = ms.toString(36).padStart(9, '0') + completionKey(rec.id, result.task);
  const draft = {
    id,
    from: rec.id,
    to,
    kind: 'completion' as const,
    summary: summarize(summaryText),
    priority: result.status === 'completed' ? ('normal' as const) : ('high' as const),
    body,
    status: result.status,
    exit_reason: result.exitReason ?? result.status,
    turns: rec.turns,
    usage: { input_tokens: rec.usage.inputTokens, output_tokens: rec.usage.outputTokens, cost_usd: rec.usage.costUsd },
    output_path: result.outputPath,
  };
  const options = {
    fixedName: messageFileName(id, ms, 0),
    now: ms,
    ...(opts.maxBodyBytes ? { maxBodyBytes: opts.maxBodyBytes } : {}),
  };
  return { draft, options };
}

/**
 * The fleet-wide once-marker of a task's completion, taken by the agent's own host. A bus that
 * does not answer is asked again for a while; still silent, the completion goes to the outbox
 * as any mail does (docs/decisions-hosts.md "Lost agents": the one case a duplicate remains possible).
 */
async function takeFleetMarker(records: RecordsBus, id: string, task: number): Promise<DoneClaim> {
  const until = Date.now() + MARKER_PATIENCE_MS;
  for (;;) {
    const claim = await records.takeDone(id, task, 'host');
    if (claim !== 'unreachable') return claim;
    if (Date.now() >= until) return 'won';
    await sleep(1_000);
  }
}

/**
 * The guaranteed terminal message (§5.7): one `completion` to the parent (or `human` for a
 * root) per task, exactly once whichever path gets there first — the harness on a clean
 * end, the reaper on a crash, a parent's liveness check, or any `flotilla` command.
 * At-least-once work, exactly-once effect: the message goes out under a name fixed by
 * agent, task and end time, and the marker is written only after that (`doneOnce`). A
 * sender killed in between leaves no marker; the next one finds the file already
 * delivered (new/ or cur/) and only writes the marker.
 */
export async function sendCompletionOnce(
  layout: Layout,
  rec: AgentRecord,
  result: TaskResult,
  opts: { text?: string; maxBodyBytes?: number } = {},
): Promise<boolean> {
  // Every task's end passes here (ours, a vendor CLI's, a cancel, the reaper's): its file leases go (§16),
  // and an in-place agent's commits come into the repository, so its branch there is its work as it ended (§12).
  await releaseTaskLeases(layout, rec.id);
  if (!rec.worktree && rec.base) {
    const [{ importInPlaceBranches }, { inPlaceBranches }] = await Promise.all([
      import('../work/import-branch.js'),
      import('../work/work.js'),
    ]);
    // A failed import leaves the branch as it was and the completion still goes; the person can find why.
    const failed = await importInPlaceBranches(layout, inPlaceBranches([rec])).catch(
      (err: unknown) => new Map([[rec.id, errorMessage(err)]]),
    );
    const why = failed.get(rec.id);
    if (why) audit(layout, { event: 'import_failed', agent: rec.id, task: result.task, reason: why });
  }
  if (completionSent(layout, rec.id, result.task)) return false;
  // A worktree agent's work is ready to review when its completion arrives: its count kept (§12). Once per task end,
  // not again on each later path that finds the completion sent.
  if (rec.worktree) await (await import('../work/work.js')).keepCountAtEnd(layout, rec);
  // On a bus the completion travels to the parent's host under its fixed id (§18).
  const { mail, records, kind } = await (await import('../bus/settings.js')).fleetBus(layout);
  const to = recipient(layout, rec);
  // Across hosts one completion per task, fleet-wide: the fleet may have marked this agent lost
  // while its host was silent and told the parent so (§17.8); then this one is withheld.
  const claim = kind === 'nats' ? await takeFleetMarker(records, rec.id, result.task) : 'won';
  if (claim !== 'won') {
    await doneOnce(completionMarker(layout, rec.id, result.task), async () => undefined, { to, withheld: claim });
    audit(layout, {
      event: 'completion_withheld',
      agent: rec.id,
      to,
      status: result.status,
      task: result.task,
      reason:
        claim === 'lost' ? 'marked lost while its host was unreachable: its parent was told' : 'another host sent it',
    });
    return false;
  }
  const { draft, options } = completionDraft(rec, result, to, opts);
  const sent = await doneOnce(
    completionMarker(layout, rec.id, result.task),
    async () => {
      await mail.deliver(draft, options);
    },
    { to },
  );
  if (!sent) return false;
  audit(layout, {
    event: 'completion',
    agent: rec.id,
    to,
    status: result.status,
    exit_reason: result.exitReason,
    task: result.task,
  });
  // The reader's `wait` (a person's, or the parent agent's own shell's) may have printed this answer before it was
  // delivered: then it is read.
  await (await import('./handed-on.js')).claimIfHandedOn(layout, rec.id, result.task, to);
  return true;
}
