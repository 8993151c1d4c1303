import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { audit } from '../../audit/audit.js';
import type { Config } from '../../config/schema.js';
import { readProvenAnswer } from '../../fleet/answer-proof.js';
import { newSortableId } from '../../fleet/ids.js';
import { isTerminal, toLastLine, type AgentRecord } from '../../fleet/record.js';
import { readRecord } from '../../fleet/registry.js';
import { summarize } from '../../inbox/message.js';
import type { Layout } from '../../layout/layout.js';
import type { HookReply, Runtime } from '../../runtimes/index.js';
import { sleep } from '../../sleep.js';
import { describeCall } from '../approvals.js';
import { updateQuietly } from './task-end.js';

/**
 * A vendor CLI's permission question in the fleet's approval queue (docs/runtimes.md,
 * "Approvals"). The CLI runs its permission hook (Claude Code and Codex `PermissionRequest`)
 * when it would ask its person about a tool call; this hook files the question in the human
 * inbox, exactly as the harness does (§7), and waits for `flotilla approve` / `deny` or the
 * dashboard, whose answer file the harness's own proof checks (fleet/answer-proof.ts). The
 * first answer wins:
 * - the fleet's: printed as the CLI's hook decision, and the CLI runs (or refuses) the call;
 * - the pane's (Claude Code shows its own prompt while the hook runs): the call's result
 *   appears in the CLI's transcript, or the CLI stops the hook; the queued request is withdrawn;
 * - nobody within `agents.approval_timeout_secs`: a denial, as in the harness.
 */
const POLL_MS = 150;

export async function vendorApproval(layout: Layout, config: Config, runtime: Runtime, rec: AgentRecord, payload: Record<string, unknown>): Promise<HookReply | null> {
  const call = runtime.toolCall(payload);
  if (!call) return null;
  if (alwaysApproved(layout, rec.id).includes(call.tool)) {
    audit(layout, { event: 'approval', agent: rec.id, tool: call.tool, decision: 'approved', by: 'always', via: runtime.name });
    return runtime.answerPermission(true, '');
  }
  const id = newSortableId();
  const summary = describeCall({ id, name: call.tool, input: call.input ?? {} });
  // Waiting before the request is visible: whoever reads the request finds the agent waiting.
  const was = rec.status;
  updateQuietly(layout, rec.id, { status: 'waiting_approval', lastLine: toLastLine(`asks: ${summary}`) });
  const { deliver } = await import('../../inbox/deliver.js');
  const delivered = await deliver(layout, {
    from: rec.id, to: 'human', kind: 'approval_request', request_id: id, tool: call.tool, priority: 'high',
    summary: summarize(`${rec.id} asks to run ${summary}`),
    body: `Agent ${rec.id} (${runtime.title}) asks to run:\n\n    ${summary}\n\nAnswer with \`flotilla approve ${id}\` or \`flotilla deny ${id} --reason "…"\`, or in its own window.`,
  }).catch(() => undefined);

  const settled = await waitForAnswer(layout, config, runtime, rec.id, id, call.tool, payload);
  // Audited first: whoever sees the request gone (the inbox, the dashboard) finds how it ended,
  // even if the CLI ends this hook process right after.
  audit(layout, {
    event: 'approval', agent: rec.id, request: id, tool: call.tool, via: runtime.name, by: settled.by,
    decision: settled.approved === undefined ? 'withdrawn' : settled.approved ? 'approved' : 'denied',
    ...(settled.approved === false ? { reason: settled.reason } : {}),
  });
  rmSync(layout.approvalAnswer(id), { force: true });
  // However it was settled, the request leaves the human inbox: no later answer claims to count.
  if (delivered) await import('../../inbox/claim.js').then(({ claim }) => claim(layout, 'human', delivered.file)).catch(() => undefined);
  const now = readRecord(layout, rec.id);
  if (now && now.status === 'waiting_approval') updateQuietly(layout, rec.id, { status: was === 'idle' ? 'idle' : 'working' });
  if (settled.approved === undefined) return null;
  if (settled.approved && settled.always) rememberAlways(layout, rec.id, call.tool);
  return runtime.answerPermission(settled.approved, settled.reason);
}

type Settled = { approved: boolean | undefined; by: string; reason: string; always?: boolean };

async function waitForAnswer(layout: Layout, config: Config, runtime: Runtime, agentId: string, requestId: string, tool: string, payload: Record<string, unknown>): Promise<Settled> {
  const answerFile = layout.approvalAnswer(requestId);
  const end = Date.now() + config.agents.approval_timeout_secs * 1000;
  const parent = process.ppid;
  const paneAnswered = runtime.name === 'claude' ? claudePaneWatch(payload) : () => false;
  // The CLI stops the hook when its person answers in the pane first (or the turn is interrupted).
  let stopped = false;
  const onSignal = () => { stopped = true; };
  for (const s of ['SIGTERM', 'SIGINT', 'SIGHUP'] as const) process.once(s, onSignal);
  let tick = 0;
  try {
    for (;;) {
      if (stopped) return { approved: undefined, by: 'pane', reason: '' };
      if (existsSync(answerFile)) {
        const proven = readProvenAnswer(layout, answerFile);
        if (proven && !proven.ok) {
          // Audited before the file goes, so whoever sees it gone finds the refusal written.
          audit(layout, { event: 'approval_refused', agent: agentId, request: requestId, tool, route: proven.route, reason: proven.reason });
          rmSync(answerFile, { force: true });
        } else if (proven?.ok) {
          const body = proven.body as { decision?: string; scope?: string; reason?: string };
          rmSync(answerFile, { force: true });
          return body.decision === 'approve'
            ? { approved: true, by: proven.route, reason: '', always: body.scope === 'always' }
            : { approved: false, by: proven.route, reason: body.reason || 'denied by a person' };
        }
      }
      // Every second: the pane's answer, a CLI that went away, an agent that ended.
      if (tick++ % Math.round(1000 / POLL_MS) === 0) {
        if (paneAnswered()) return { approved: undefined, by: 'pane', reason: '' };
        if (process.ppid !== parent) return { approved: undefined, by: 'aborted', reason: '' };
        const rec = readRecord(layout, agentId);
        if (!rec || isTerminal(rec.status)) return { approved: undefined, by: 'aborted', reason: '' };
      }
      if (Date.now() >= end) return { approved: false, by: 'timeout', reason: `nobody answered within ${config.agents.approval_timeout_secs}s (agents.approval_timeout_secs)` };
      await sleep(POLL_MS);
    }
  } finally {
    for (const s of ['SIGTERM', 'SIGINT', 'SIGHUP'] as const) process.off(s, onSignal);
  }
}

/**
 * Claude Code shows its own prompt while the hook runs and does not stop the hook when its
 * person answers there: the answer shows in its transcript as the call's result (the tool ran,
 * or "doesn't want to proceed"). The payload names no call id, so the call is the tool_use with
 * this name and input that had no result when first seen.
 */
function claudePaneWatch(payload: Record<string, unknown>): () => boolean {
  const file = typeof payload.transcript_path === 'string' ? payload.transcript_path : undefined;
  const name = payload.tool_name;
  const input = JSON.stringify(payload.tool_input ?? {});
  const open = new Set<string>();
  return () => {
    if (!file) return false;
    let text: string;
    try { text = readFileSync(file, 'utf8'); } catch { return false; }
    const results = new Set<string>();
    const uses: string[] = [];
    for (const line of text.split('\n')) {
      if (!line.includes('"tool_use')) continue;
      let entry: { message?: { content?: unknown } };
      try { entry = JSON.parse(line) as typeof entry; } catch { continue; }
      const content = Array.isArray(entry.message?.content) ? (entry.message.content as { type?: string; id?: string; name?: string; input?: unknown; tool_use_id?: string }[]) : [];
      for (const c of content) {
        if (c.type === 'tool_result' && c.tool_use_id) results.add(c.tool_use_id);
        if (c.type === 'tool_use' && c.id && c.name === name && JSON.stringify(c.input ?? {}) === input) uses.push(c.id);
      }
    }
    for (const u of uses) if (!results.has(u)) open.add(u);
    return [...open].some((u) => results.has(u));
  };
}

/** `flotilla approve --always`: the tool is approved for the rest of this agent's life, as in the harness. */
function alwaysFile(layout: Layout, id: string): string {
  return join(layout.runtimeDir(id), 'approved-always.json');
}

function alwaysApproved(layout: Layout, id: string): string[] {
  try { return JSON.parse(readFileSync(alwaysFile(layout, id), 'utf8')) as string[]; } catch { return []; }
}

function rememberAlways(layout: Layout, id: string, tool: string): void {
  try { writeFileSync(alwaysFile(layout, id), JSON.stringify([...new Set([...alwaysApproved(layout, id), tool])])); } catch { /* asked again next time */ }
}
