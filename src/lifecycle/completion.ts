import { createHash } from 'node:crypto';
import { audit } from '../audit/audit.js';
import type { Layout } from '../layout/layout.js';
import type { AgentRecord, TaskResult } from '../fleet/record.js';
import { readRecord } from '../fleet/registry.js';
import { summarize } from '../inbox/message.js';
import { claimOnce } from './once.js';

/**
 * The last 10 characters of the completion id of `agentId`'s task `task`: fixed by agent and
 * task, so a reader that already has the result another way (wait_for_agents) can tell
 * which message in its inbox that result was, and claim it instead of showing it again.
 */
export function completionKey(agentId: string, task: number): string {
  return createHash('sha256').update(`${agentId}\0${task}`).digest('hex').slice(0, 10);
}

/** True when `msg` is the completion of `agentId`'s task `task`. */
export function isCompletionOf(msg: { kind: string; from: string; id: string }, agentId: string, task: number): boolean {
  return msg.kind === 'completion' && msg.from === agentId && msg.id.endsWith(completionKey(agentId, task));
}

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
  const ms = Date.now();
  await deliver(
    layout,
    {
      // Time-sortable like every id, with the task's key in place of the random part.
      id: ms.toString(36).padStart(9, '0') + completionKey(rec.id, result.task),
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
    { now: ms, ...(opts.maxBodyBytes ? { maxBodyBytes: opts.maxBodyBytes } : {}) },
  );
  audit(layout, { event: 'completion', agent: rec.id, to, status: result.status, exit_reason: result.exitReason, task: result.task });
  return true;
}
