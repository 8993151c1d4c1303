import { audit } from '../audit/audit.js';
import type { Layout } from '../layout/layout.js';
import type { AgentRecord, TaskResult } from '../fleet/record.js';
import { readRecord } from '../fleet/registry.js';
import { summarize } from '../inbox/message.js';
import { claimOnce } from './once.js';

/**
 * The guaranteed terminal message (§5.7): one `completion` to the parent (or `human` for a
 * root) per task, exactly once whichever path gets there first — the harness on a clean
 * end, the reaper on a crash, a parent's liveness check, or any `flotilla` command.
 */
export async function sendCompletionOnce(
  layout: Layout,
  rec: AgentRecord,
  result: TaskResult,
  opts: { text?: string; maxBodyBytes?: number } = {},
): Promise<boolean> {
  if (!claimOnce(layout.marker(`${rec.id}.task-${result.task}.completion`))) return false;
  const { deliver } = await import('../inbox/deliver.js');
  const to = rec.parentId && readRecord(layout, rec.parentId) ? rec.parentId : 'human';
  const answer = (opts.text ?? '').trim();
  const headline = `${rec.id} ${result.status}${result.exitReason && result.exitReason !== result.status ? ` (${result.exitReason})` : ''}`;
  const body = [
    `Agent ${rec.id} (${rec.name}) finished its task with status **${result.status}**${result.exitReason ? `: ${result.exitReason}` : ''}.`,
    result.outputPath ? `Final answer file: ${result.outputPath}` : '',
    answer ? `\n${answer.length > 4000 ? answer.slice(0, 4000) + `\n… (full answer in ${result.outputPath ?? 'the transcript'})` : answer}` : '',
  ].filter(Boolean).join('\n');
  const summaryText = answer ? `${headline}: ${answer.split('\n').find((l) => l.trim()) ?? ''}` : headline;
  await deliver(
    layout,
    {
      from: rec.id,
      to,
      kind: 'completion',
      summary: summarize(summaryText),
      priority: result.status === 'completed' ? 'normal' : 'high',
      body,
      status: result.status,
      exit_reason: result.exitReason ?? result.status,
      turns: rec.turns,
      usage: { input_tokens: rec.usage.inputTokens, output_tokens: rec.usage.outputTokens, cost_usd: rec.usage.costUsd },
      output_path: result.outputPath,
    },
    opts.maxBodyBytes ? { maxBodyBytes: opts.maxBodyBytes } : {},
  );
  audit(layout, { event: 'completion', agent: rec.id, to, status: result.status, exit_reason: result.exitReason, task: result.task });
  return true;
}
