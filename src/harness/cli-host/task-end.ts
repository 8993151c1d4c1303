import type { Config } from '../../config/schema.js';
import { toLastLine, type AgentRecord, type TaskResult } from '../../fleet/record.js';
import { readRecord, updateQuietly } from '../../fleet/registry.js';
import type { Layout } from '../../layout/layout.js';

/**
 * One task of a vendor agent ends (§13): its answer → output/<id>.md, the record `idle` with
 * the task's result, exactly one completion to the parent. The turn-end hook ends a task the
 * CLI finished; the shim ends one the vendor API failed or a fleet limit stopped. Whichever
 * comes second finds the task already ended and does nothing.
 */
export async function endVendorTask(
  layout: Layout,
  config: Config,
  id: string,
  end: {
    status: TaskResult['status'];
    text: string;
    reason: string | null;
    patch?: Partial<AgentRecord>;
  },
): Promise<AgentRecord | undefined> {
  const rec = readRecord(layout, id);
  if (!rec || (rec.lastTask && rec.lastTask.task >= rec.task)) return undefined;
  const { writeOutput, writeTaskResult } = await import('../../transcript/output.js');
  let outputPath: string | null = null;
  // Each task's own answer file and ending, as the harness keeps them (§8): a waiter for task n,
  // and a teammate's board task (cli-host/board-work.ts), read task n's even after a later one.
  if (end.text.trim() || end.status === 'completed') {
    try {
      outputPath = writeOutput(layout, id, end.text, config.output.max_bytes, rec.task).path;
    } catch {
      /* the completion still goes out */
    }
  }
  const result: TaskResult = {
    task: rec.task,
    status: end.status,
    exitReason: end.reason,
    finishedAt: new Date().toISOString(),
    outputPath,
  };
  try {
    writeTaskResult(layout, id, result);
  } catch {
    /* the record still says how its last task ended */
  }
  const lastLine = end.text.trim() ? toLastLine(end.text) : end.reason ? toLastLine(end.reason) : undefined;
  const done =
    updateQuietly(layout, id, {
      status: 'idle',
      lastTask: result,
      ...(lastLine ? { lastLine } : {}),
      ...(end.patch ?? {}),
    }) ?? rec;
  const { sendCompletionOnce } = await import('../../lifecycle/completion.js');
  await sendCompletionOnce(layout, done, result, { text: end.text, maxBodyBytes: config.inbox.max_body_bytes });
  return done;
}
