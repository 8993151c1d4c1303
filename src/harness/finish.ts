import { audit } from '../audit/audit.js';
import type { Log } from '../audit/logger.js';
import type { Config } from '../config/schema.js';
import type { AgentRecord, TaskResult } from '../fleet/record.js';
import { endRecord } from '../fleet/registry.js';
import type { Layout } from '../layout/layout.js';
import { sendCompletionOnce } from '../lifecycle/completion.js';
import { terminateForegroundChildren } from '../lifecycle/signal.js';
import { killLeftoverGroups } from '../lifecycle/tool-groups.js';

/**
 * Everything that happens once when an agent ends (§5.7-5.8), whichever way: its
 * foreground children are cancelled, its record gets the terminal state, the open task's
 * completion goes out (once), stop hooks run (once), the transcript gets its end line.
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
  appendEnd: (status: TaskResult['status'], reason: string) => void;
}): Promise<AgentRecord> {
  const { layout, record: rec, status, reason } = opts;
  terminateForegroundChildren(layout, rec.id, rec.id);
  // What its commands left running ends with it (background child agents excepted).
  killLeftoverGroups(layout, rec.id);
  const result: TaskResult | null = opts.openTask
    ? { task: rec.task, status, exitReason: reason, finishedAt: new Date().toISOString(), outputPath: opts.openTask.outputPath }
    : null;
  const { record } = endRecord(layout, rec.id, { status, exitReason: reason, ...(result ? { lastTask: result } : {}) });
  if (result) await sendCompletionOnce(layout, record, result, { text: opts.openTask?.text ?? '', maxBodyBytes: opts.config.inbox.max_body_bytes });
  opts.appendEnd(status, reason);
  await opts.runStopHooks(status, reason);
  audit(layout, { event: 'agent_end', agent: rec.id, status, reason, turns: record.turns, input_tokens: record.usage.inputTokens, output_tokens: record.usage.outputTokens });
  return record;
}
