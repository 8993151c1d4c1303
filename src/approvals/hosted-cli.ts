import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { audit } from '../audit/audit.js';
import type { Config } from '../config/schema.js';
import { readProvenAnswer } from '../fleet/answer-proof.js';
import { newSortableId } from '../fleet/ids.js';
import { isTerminal, toLastLine, type AgentRecord } from '../fleet/record.js';
import { readRecord, updateQuietly } from '../fleet/registry.js';
import { summarize } from '../inbox/message.js';
import type { Layout } from '../layout/layout.js';
import type { HookReply, Runtime } from '../runtimes/index.js';
import { sleep } from '../sleep.js';
import { describeCall } from './ask.js';

/**
 * A vendor CLI's permission question in the fleet's approval queue (docs/runtimes.md,
 * "Approvals"). The CLI runs its permission hook (Claude Code and Codex `PermissionRequest`)
 * when it would ask its person about a tool call; this hook files the question in the human
 * inbox, exactly as the harness does (§7), where `flotilla approve` / `deny` or the dashboard
 * answer it, with an answer file the harness's own proof checks (fleet/answer-proof.ts). The
 * first answer wins, and how the pane's side is reached depends on the CLI:
 * - Claude Code shows its own prompt while the hook runs: the hook waits, prints the fleet's
 *   answer as the CLI's decision, and withdraws the request when the pane answered first (the
 *   call's result appears in the CLI's transcript, or the CLI stops the hook);
 * - a CLI that shows its prompt only once no hook decided (`runtime.paneQuestion`: Codex)
 *   gets no decision: the hook files the question and returns at once, the CLI asks in its
 *   pane, and the shim answers that prompt with keys if the queue answers first, or withdraws
 *   the request when the prompt went away (cli-host/pane-question.ts);
 * - nobody within `agents.approval_timeout_secs`: a denial, as in the harness.
 */
const POLL_MS = 150;

/**
 * A question the CLI asks in its own pane while it is also in the fleet's queue (cli-host/pane-question.ts reads
 * these).
 */
export interface OpenQuestion {
  requestId: string;
  tool: string;
  summary: string;
  /** The request's file in the human inbox, claimed however it is settled. */
  inboxFile?: string;
  /** The agent's status before it asked. */
  was: string;
  /** When it was asked (ms since the epoch): the timeout counts from here. */
  at: number;
  /**
   * The tool was approved for the agent's life (`flotilla approve --always`): not in the queue, the shim approves it.
   */
  always?: boolean;
}

export async function vendorApproval(
  layout: Layout,
  config: Config,
  runtime: Runtime,
  rec: AgentRecord,
  payload: Record<string, unknown>,
): Promise<HookReply | null> {
  const call = (runtime.questionCall ?? runtime.toolCall)(payload);
  if (!call) return null;
  if (alwaysApproved(layout, rec.id).includes(call.tool)) {
    if (runtime.paneQuestion) {
      // A CLI whose hook cannot answer (Gemini) is answered in its pane, by the shim, at once.
      const id = newSortableId();
      writeQuestion(layout, rec.id, {
        requestId: id,
        tool: call.tool,
        summary: describeCall({ id, name: call.tool, input: call.input ?? {} }),
        was: rec.status,
        at: Date.now(),
        always: true,
      });
      return null;
    }
    audit(layout, {
      event: 'approval',
      agent: rec.id,
      tool: call.tool,
      decision: 'approved',
      by: 'always',
      via: runtime.name,
    });
    return runtime.answerPermission(true, '');
  }
  const q = await fileRequest(layout, runtime, rec, call);
  if (runtime.paneQuestion) {
    // No decision: the CLI asks in its pane, and the shim answers there if the queue is first.
    writeQuestion(layout, rec.id, q);
    return null;
  }
  const settled = await waitForAnswer(layout, config, runtime, rec.id, q.requestId, call.tool, payload);
  await settleRequest(layout, rec.id, runtime.name, q, settled);
  if (settled.approved === undefined) return null;
  return runtime.answerPermission(settled.approved, settled.reason);
}

/**
 * The request in the human inbox, the agent `waiting_approval` first: whoever reads the request finds the agent
 * waiting.
 */
async function fileRequest(
  layout: Layout,
  runtime: Runtime,
  rec: AgentRecord,
  call: { tool: string; input?: Record<string, unknown> },
): Promise<OpenQuestion> {
  const id = newSortableId();
  const summary = describeCall({ id, name: call.tool, input: call.input ?? {} });
  updateQuietly(layout, rec.id, { status: 'waiting_approval', lastLine: toLastLine(`asks: ${summary}`) });
  const { deliver } = await import('../inbox/deliver.js');
  const delivered = await deliver(layout, {
    from: rec.id,
    to: 'human',
    kind: 'approval_request',
    request_id: id,
    tool: call.tool,
    priority: 'high',
    summary: summarize(`${rec.id} asks to run ${summary}`),
    body: `Agent ${rec.id} (${runtime.title}) asks to run:\n\n    ${summary}\n\nAnswer with \`flotilla approve ${id}\` or \`flotilla deny ${id} --reason "…"\`, or in its own window.`,
  }).catch(() => undefined);
  return {
    requestId: id,
    tool: call.tool,
    summary,
    ...(delivered ? { inboxFile: delivered.file } : {}),
    was: rec.status,
    at: Date.now(),
  };
}

/**
 * However a question was settled: the audit line first (whoever sees the request gone finds
 * how it ended, even if the CLI ends this process right after), then the request leaves the
 * human inbox — no later answer claims to count — and the agent is back at work.
 */
export async function settleRequest(
  layout: Layout,
  agentId: string,
  via: string,
  q: OpenQuestion,
  settled: Settled,
): Promise<void> {
  audit(layout, {
    event: 'approval',
    agent: agentId,
    request: q.requestId,
    tool: q.tool,
    via,
    by: settled.by,
    decision: settled.approved === undefined ? 'withdrawn' : settled.approved ? 'approved' : 'denied',
    ...(settled.approved === false ? { reason: settled.reason } : {}),
  });
  rmSync(layout.approvalAnswer(q.requestId), { force: true });
  rmSync(questionFile(layout, agentId, q.requestId), { force: true });
  if (q.inboxFile)
    await import('../inbox/claim.js').then(({ claim }) => claim(layout, 'human', q.inboxFile!)).catch(() => undefined);
  const now = readRecord(layout, agentId);
  if (now && now.status === 'waiting_approval')
    updateQuietly(layout, agentId, { status: q.was === 'idle' ? 'idle' : 'working' });
  if (settled.approved && settled.always) rememberAlways(layout, agentId, q.tool);
}

/** The questions the agent's CLI asks in its pane now, oldest first. */
export function openQuestions(layout: Layout, agentId: string): OpenQuestion[] {
  let names: string[];
  try {
    names = readdirSync(questionsDir(layout, agentId))
      .filter((n) => n.endsWith('.json'))
      .sort();
  } catch {
    return [];
  }
  const out: OpenQuestion[] = [];
  for (const n of names) {
    try {
      out.push(JSON.parse(readFileSync(join(questionsDir(layout, agentId), n), 'utf8')) as OpenQuestion);
    } catch {
      /* half-written or gone */
    }
  }
  return out;
}

function questionsDir(layout: Layout, agentId: string): string {
  return join(layout.runtimeDir(agentId), 'questions');
}

function questionFile(layout: Layout, agentId: string, requestId: string): string {
  return join(questionsDir(layout, agentId), `${requestId}.json`);
}

function writeQuestion(layout: Layout, agentId: string, q: OpenQuestion): void {
  mkdirSync(questionsDir(layout, agentId), { recursive: true, mode: 0o700 });
  const file = questionFile(layout, agentId, q.requestId);
  writeFileSync(`${file}.tmp`, JSON.stringify(q), { mode: 0o600 });
  renameSync(`${file}.tmp`, file);
}

export type Settled = { approved: boolean | undefined; by: string; reason: string; always?: boolean };

async function waitForAnswer(
  layout: Layout,
  config: Config,
  runtime: Runtime,
  agentId: string,
  requestId: string,
  tool: string,
  payload: Record<string, unknown>,
): Promise<Settled> {
  const answerFile = layout.approvalAnswer(requestId);
  const end = Date.now() + config.agents.approval_timeout_secs * 1000;
  const parent = process.ppid;
  const paneAnswered = runtime.name === 'claude' ? claudePaneWatch(payload) : () => false;
  // The CLI stops the hook when its person answers in the pane first (or the turn is interrupted).
  let stopped = false;
  const onSignal = () => {
    stopped = true;
  };
  for (const s of ['SIGTERM', 'SIGINT', 'SIGHUP'] as const) process.once(s, onSignal);
  let tick = 0;
  try {
    for (;;) {
      if (stopped) return { approved: undefined, by: 'pane', reason: '' };
      if (existsSync(answerFile)) {
        const proven = readProvenAnswer(layout, answerFile);
        if (proven && !proven.ok) {
          // Audited before the file goes, so whoever sees it gone finds the refusal written.
          audit(layout, {
            event: 'approval_refused',
            agent: agentId,
            request: requestId,
            tool,
            route: proven.route,
            reason: proven.reason,
          });
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
      if (Date.now() >= end)
        return {
          approved: false,
          by: 'timeout',
          reason: `nobody answered within ${config.agents.approval_timeout_secs}s (agents.approval_timeout_secs)`,
        };
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
    try {
      text = readFileSync(file, 'utf8');
    } catch {
      return false;
    }
    const results = new Set<string>();
    const uses: string[] = [];
    for (const line of text.split('\n')) {
      if (!line.includes('"tool_use')) continue;
      let entry: { message?: { content?: unknown } };
      try {
        entry = JSON.parse(line) as typeof entry;
      } catch {
        continue;
      }
      const content = Array.isArray(entry.message?.content)
        ? (entry.message.content as {
            type?: string;
            id?: string;
            name?: string;
            input?: unknown;
            tool_use_id?: string;
          }[])
        : [];
      for (const c of content) {
        if (c.type === 'tool_result' && c.tool_use_id) results.add(c.tool_use_id);
        if (c.type === 'tool_use' && c.id && c.name === name && JSON.stringify(c.input ?? {}) === input)
          uses.push(c.id);
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
  try {
    return JSON.parse(readFileSync(alwaysFile(layout, id), 'utf8')) as string[];
  } catch {
    return [];
  }
}

function rememberAlways(layout: Layout, id: string, tool: string): void {
  try {
    writeFileSync(alwaysFile(layout, id), JSON.stringify([...new Set([...alwaysApproved(layout, id), tool])]));
  } catch {
    /* asked again next time */
  }
}
