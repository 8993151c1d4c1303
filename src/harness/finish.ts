import { audit } from '../audit/audit.js';
import type { Log } from '../audit/logger.js';
import type { Config } from '../config/schema.js';
import { errorMessage, isErrno } from '../errors.js';
import type { AgentRecord, TaskResult } from '../fleet/record.js';
import { endRecord, overwriteRecord } from '../fleet/registry.js';
import type { Layout } from '../layout/layout.js';
import { completionSent, sendCompletionOnce } from '../lifecycle/completion.js';
import { reopenClaims } from '../lifecycle/reopen-claims.js';
import { clearFinishing, markFinishing, releaseReserve } from '../lifecycle/reserve.js';
import { terminateForegroundChildren } from '../lifecycle/signal.js';
import { killLeftoverGroups } from '../lifecycle/tool-groups.js';

/**
 * Everything that happens once when an agent ends (§5.7-5.8), whichever way: its
 * foreground children are cancelled (on other hosts too), its record gets the terminal state, the open task's
 * transcript gets its end, the open task's completion goes out (once), stop hooks run (once).
 * `state/index/finishing/<id>` spans the ending: a harness killed half-way leaves it, and the
 * reaper finishes what is owed (completion, stop hooks) although the record is terminal.
 */
export async function finishAgent(opts: {
  layout: Layout;
  config: Config;
  record: AgentRecord;
  status: TaskResult['status'];
  reason: string;
  openTask: { text: string; outputPath: string | null } | null;
  log: Log;
  runStopHooks: (status: string, reason: string) => Promise<void>;
  /**
   * The transcript's end line and sidecar: written before the completion, so a parent that reads the transcript on it
   * sees the end.
   */
  closeTranscript: (ended: AgentRecord) => void;
}): Promise<AgentRecord> {
  const { layout, record: rec, status, reason, log } = opts;
  // Room for the ending on a full disk.
  releaseReserve(layout, rec.id);
  markFinishing(layout, rec.id);
  try {
    terminateForegroundChildren(layout, rec.id, rec.id);
  } catch (err) {
    log.warn({ err: errorMessage(err) }, 'could not signal children');
  }
  // What its commands left running ends with it (background child agents excepted).
  try {
    killLeftoverGroups(layout, rec.id);
  } catch (err) {
    log.warn({ err: errorMessage(err) }, 'could not end leftover commands');
  }
  const result: TaskResult | null = opts.openTask
    ? {
        task: rec.task,
        status,
        exitReason: reason,
        finishedAt: new Date().toISOString(),
        outputPath: opts.openTask.outputPath,
      }
    : null;
  // The last task as this process knows it: a full disk may have kept it from the file.
  const lastTask = result ?? rec.lastTask;
  const record = endOwnRecord(layout, rec, { status, exitReason: reason, ...(lastTask ? { lastTask } : {}) }, log);
  // Whatever it had claimed on a task board is open again for its teammates (§15).
  await reopenClaims(layout, rec.id, reason);
  try {
    opts.closeTranscript(record);
  } catch (err) {
    log.warn({ err: errorMessage(err) }, 'transcript end not written');
  }
  // The open task's completion, or the last task's if sending it failed earlier (a full disk).
  const owed = record.lastTask && !completionSent(layout, rec.id, record.lastTask.task) ? record.lastTask : null;
  if (owed) {
    const text = result && owed.task === result.task ? (opts.openTask?.text ?? '') : '';
    await sendCompletionOnce(layout, record, owed, { text, maxBodyBytes: opts.config.inbox.max_body_bytes });
  }
  await opts.runStopHooks(status, reason);
  // Its foreground children on other hosts end with it too (§5.8): after its own end is out,
  // so its parent hears of it first; a harness killed meanwhile leaves the finishing mark,
  // and the reaper asks them.
  if (opts.config.fleet.bus !== 'maildir') {
    const { cancelFarChildren } = await import('../lifecycle/far-cancel.js');
    for (const note of (await cancelFarChildren(layout, opts.config, record)).notes)
      log.warn({ note }, 'children on other hosts');
  }
  audit(layout, {
    event: 'agent_end',
    agent: rec.id,
    status,
    reason,
    turns: record.turns,
    input_tokens: record.usage.inputTokens,
    output_tokens: record.usage.outputTokens,
  });
  clearFinishing(layout, rec.id);
  return record;
}

/**
 * Ends this agent's own record; a file that can no longer be read is replaced from memory, so the end is still
 * recorded.
 */
function endOwnRecord(
  layout: Layout,
  rec: AgentRecord,
  end: Pick<AgentRecord, 'status'> & Partial<AgentRecord>,
  log: Log,
): AgentRecord {
  try {
    return endRecord(layout, rec.id, end).record;
  } catch (err) {
    if (isErrno(err, 'ENOSPC') || isErrno(err, 'EIO') || isErrno(err, 'EROFS') || isErrno(err, 'EDQUOT')) throw err;
    log.error({ err: errorMessage(err) }, 'own record unreadable; rewriting it from memory');
    return overwriteRecord(layout, { ...rec, finishedAt: new Date().toISOString(), ...end });
  }
}
