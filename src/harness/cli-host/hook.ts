import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { audit } from '../../audit/audit.js';
import type { Config } from '../../config/schema.js';
import { findParentAgent } from '../../fleet/lineage.js';
import { toLastLine, type AgentRecord } from '../../fleet/record.js';
import { readRecord } from '../../fleet/registry.js';
import type { Layout } from '../../layout/layout.js';
import { toolRow } from '../../policy/tool-table.js';
import {
  loadRuntime,
  type FleetHookEvent,
  type HookReply,
  type Runtime,
  type VendorRuntimeName,
} from '../../runtimes/index.js';
import { predecessors } from '../../inbox/adopt.js';
import { ownUsage, resumedSessionLoaded } from './inherited.js';
import { drainInbox } from './mail.js';
import { fleetToolsTakenIn } from './mcp-ready.js';
import { fleetInstructions } from '../../mcp/identity.js';
import { sleep } from '../../sleep.js';
import { traceMark } from '../../trace.js';
import { lastTurnFailure, newestSessionFile } from './session-watch.js';
import { endVendorTask } from './task-end.js';
import { updateQuietly } from '../../fleet/registry.js';

/**
 * `flotilla runtime-hook <event>`: what a vendor CLI's hooks run (§13). The hook process
 * descends from the CLI, which descends from the shim that is the registered agent, so the
 * agent is found by the same ancestry walk as every identity (fleet/lineage.ts); a hook run
 * outside any vendor agent does nothing.
 *
 * - session-start: the CLI's session begins; a CLI that takes its task only after this hook
 *   (Runtime.firstTurnWaitsForMcp) is answered once `flotilla mcp` has listed it the fleet tools.
 * - turn-start: a task begins (a person's prompt or a wake-up paste); unread mail joins it.
 * - turn-end: unread mail continues the turn (capped per task); otherwise the task ends: its
 *   final answer → output/<id>.md, the record idle with usage from the CLI's transcript,
 *   one completion to the parent.
 * - pre-tool: the audit line, the agent's tools (`toolRefusal`), the read scope for the CLI's
 *   read tools (cli-host/read-scope.ts), the file lease for its file tools (cli-host/lease-check.ts,
 *   §16), and the shell gate (§7) for shell commands.
 * - permission: the CLI would ask its person about a call; the question goes to the fleet's
 *   approval queue as well (approvals/hosted-cli.ts).
 */
export const MAX_MAIL_CONTINUES = 5;

/** How long a resumed CLI's first turn-start waits for it to load the session (within Gemini's 60 s hook timeout). */
const RESUME_LOAD_MS = 10_000;

const HOOK_EVENTS: readonly string[] = ['session-start', 'turn-start', 'turn-end', 'pre-tool', 'permission'];

/** Why `event` is no hook event a vendor CLI's hooks send; undefined when it is one. */
export function hookEventRefusal(event: string | undefined): string | undefined {
  return HOOK_EVENTS.includes(event ?? '')
    ? undefined
    : `unknown hook event '${event ?? ''}' — use session-start, turn-start, turn-end, pre-tool or permission`;
}

/**
 * Answers one hook of a vendor agent: the agent the hook process descends from, with that process's environment; or,
 * from the agent's own shim (`self`: door-send.ts answers its CLI's hooks in-process), that agent, with the
 * environment its commands get.
 */
export async function runRuntimeHook(
  layout: Layout,
  config: Config,
  event: FleetHookEvent,
  stdin: string,
  self?: { id: string; env: NodeJS.ProcessEnv },
): Promise<HookReply | null> {
  const rec = self ? readRecord(layout, self.id) : findParentAgent(layout).parent;
  if (!rec || rec.runtime === 'flotilla') return null;
  return answer(layout, config, event, rec, stdin, self?.env ?? process.env);
}

async function answer(
  layout: Layout,
  config: Config,
  event: FleetHookEvent,
  self: AgentRecord,
  stdin: string,
  env: NodeJS.ProcessEnv,
): Promise<HookReply | null> {
  const runtime = await loadRuntime(self.runtime as VendorRuntimeName);
  let payload: Record<string, unknown> = {};
  try {
    payload = JSON.parse(stdin || '{}') as Record<string, unknown>;
  } catch {
    /* an empty or odd payload is still an event */
  }
  switch (event) {
    case 'session-start':
      // Runtime.firstTurnWaitsForMcp: the CLI takes its task once this has answered.
      await fleetToolsTakenIn(layout, self);
      return runtime.sessionContext?.(fleetInstructions({ kind: 'agent', record: self })) ?? null;
    case 'pre-tool':
      return preTool(layout, config, runtime, self, payload, env);
    case 'turn-start':
      return turnStart(layout, config, runtime, self, payload);
    case 'turn-end':
      return turnEnd(layout, config, runtime, self, payload);
    case 'permission': {
      const { vendorApproval } = await import('../../approvals/hosted-cli.js');
      return vendorApproval(layout, config, runtime, self, payload);
    }
  }
}

async function preTool(
  layout: Layout,
  config: Config,
  runtime: Runtime,
  rec: AgentRecord,
  payload: Record<string, unknown>,
  env: NodeJS.ProcessEnv,
): Promise<HookReply | null> {
  const call = runtime.toolCall(payload);
  if (!call) return null;
  const stopped = limitRefusal(rec);
  if (stopped) {
    audit(layout, { event: 'policy_denied', agent: rec.id, tool: call.tool, rule: stopped.rule, via: runtime.name });
    // A tool asked for after the limit's answer: that answer was not the last, so the task ends here (the shim stops
    // the turn).
    if (stopped.rule === 'limit:max_turns')
      await endVendorTask(layout, config, rec.id, { status: 'failed', text: '', reason: 'max_turns' });
    // The refusal ends the CLI's turn where it can: sent on to the model, it would be asked again.
    return runtime.denyToolAndStop ? runtime.denyToolAndStop(stopped.reason) : runtime.denyTool(stopped.reason);
  }
  const refused = toolRefusal(call, rec);
  if (refused) {
    audit(layout, {
      event: 'policy_denied',
      agent: rec.id,
      tool: call.tool,
      rule: refused.rule,
      via: runtime.name,
      ...(call.command !== undefined ? { command: call.command } : {}),
    });
    return runtime.denyTool(refused.reason);
  }
  // Reads outside the agent's folders ask through the CLI's own prompt, or are refused (docs/security.md, "What reads
  // may touch").
  const { vendorReadDecision } = await import('./read-scope.js');
  const scoped = vendorReadDecision(call, rec, layout, config, env, runtime.name);
  if (scoped && scoped.decision !== 'allow') {
    audit(layout, {
      event: scoped.decision === 'deny' ? 'policy_denied' : 'tool_call',
      agent: rec.id,
      tool: call.tool,
      rule: scoped.rule,
      via: runtime.name,
      ...(scoped.decision === 'ask' ? { decision: 'ask' } : {}),
    });
    return scoped.decision === 'deny' ? runtime.denyTool(scoped.reason) : runtime.askTool(scoped.reason);
  }
  // A file another agent holds is not changed (docs/design.md §16, file leases).
  const { vendorLeaseCheck } = await import('./lease-check.js');
  const leased = await vendorLeaseCheck(layout, runtime, rec, call, payload, env);
  if (leased) return leased;
  if (call.tool === 'shell' && call.command !== undefined) {
    const { loadShellClassifier } = await import('../shell-parser.js');
    const verdict = (await loadShellClassifier(config.security.deny_commands, env))(call.command);
    // An opaque command is left to the CLI's own permission prompt: the fleet cannot ask from inside a hook.
    if (verdict.verdict === 'deny') {
      audit(layout, {
        event: 'policy_denied',
        agent: rec.id,
        tool: 'shell',
        rule: `shell-gate:${verdict.rule ?? '?'}`,
        command: call.command,
        via: runtime.name,
      });
      return runtime.denyTool(
        `the fleet's shell gate refused this command (rule: ${verdict.rule ?? '?'}${verdict.why ? `: ${verdict.why}` : ''})`,
      );
    }
  }
  audit(layout, {
    event: 'tool_call',
    agent: rec.id,
    tool: call.tool,
    decision: 'allow',
    via: runtime.name,
    ...(call.command !== undefined ? { command: call.command } : {}),
  });
  updateQuietly(layout, rec.id, { lastLine: toLastLine(call.command !== undefined ? `$ ${call.command}` : call.tool) });
  return null;
}

/**
 * A limit that stopped the task (docs/runtimes.md, "Limits"): the task's model answers reached
 * `max_turns`, or the shim ended the task (`max_turns`, `timeout`, `budget`) while the CLI
 * was still at it — it runs no more tools for it.
 */
export function limitRefusal(
  rec: Pick<AgentRecord, 'task' | 'lastTask' | 'taskTurns' | 'maxTurns' | 'status'>,
): { rule: string; reason: string } | undefined {
  const ended = rec.lastTask !== null && rec.lastTask.task >= rec.task;
  if (ended && rec.lastTask?.status !== 'completed') {
    const why = rec.lastTask?.exitReason ?? rec.lastTask?.status ?? 'stopped';
    return {
      rule: `limit:${why}`,
      reason: `this task was stopped by the fleet (${why}) — end your turn now and say what is left undone`,
    };
  }
  if (!ended && rec.taskTurns >= rec.maxTurns) {
    return {
      rule: 'limit:max_turns',
      reason: `this task reached its max_turns (${rec.maxTurns}) — end your turn now and say what is left undone`,
    };
  }
  return undefined;
}

/**
 * Why the fleet refuses a vendor CLI's call before the CLI runs it; undefined leaves it to the
 * CLI's own permission settings (written from the same policy). A CLI tool the tool table files
 * under a canonical one (policy/tool-table.ts) is that tool: withheld there, refused here, for
 * every runtime whose hook sees the call — Codex's `apply_patch` included, which its settings
 * cannot withhold.
 */
export function toolRefusal(
  call: { tool: string },
  rec: Pick<AgentRecord, 'effectivePolicy'>,
): { rule: string; reason: string } | undefined {
  if (!toolRow(call.tool)) return undefined;
  if (rec.effectivePolicy.tools.includes(call.tool)) return undefined;
  return { rule: 'tools', reason: `'${call.tool}' is not among this agent's tools — its definition withholds it` };
}

async function turnStart(
  layout: Layout,
  config: Config,
  runtime: Runtime,
  rec: AgentRecord,
  payload: Record<string, unknown>,
): Promise<HookReply | null> {
  // A turn no one asked for: the CLI sending a tool's result on by itself after its task ended
  // (Gemini does, when the limit's Escape lands between a refused tool and its next request).
  // It is not a new task, and the turn is stopped before the model is asked again.
  if (runtime.turnPrompt(payload)?.trim() === '') {
    const now = readRecord(layout, rec.id) ?? rec;
    const stopped = limitRefusal(now);
    if (now.lastTask && now.lastTask.task >= now.task) {
      audit(layout, {
        event: 'policy_denied',
        agent: rec.id,
        tool: 'turn',
        rule: stopped?.rule ?? 'ended',
        via: runtime.name,
      });
      return runtime.stopTurn(stopped?.reason ?? 'this task has ended — wait for the next message');
    }
  }
  // A resumed CLI that loads the session while its first turn starts (Runtime.resumeLoaded):
  // the turn takes the CLI's chat once this hook has answered, so the answer waits for the
  // session, or the model is asked without the earlier turns.
  if (runtime.resumeLoaded && rec.resumedFrom && rec.lastTask === null) {
    const asked = Date.now();
    const loaded = await resumedSessionLoaded(layout.runtimeDir(rec.id), runtime.resumeLoaded, RESUME_LOAD_MS);
    traceMark(`hook turn-start: resumed session ${loaded ? 'loaded' : 'not loaded'} after ${Date.now() - asked} ms`);
  }
  // Decided on the record as it is now, not as this hook found it: a limit may have ended the
  // task while the hook process started.
  updateQuietly(layout, rec.id, (now) => {
    const ended = now.lastTask !== null && now.lastTask.task >= now.task;
    return { status: 'working', ...(ended ? { task: now.task + 1, taskTurns: 0 } : {}) };
  });
  const mail = await drainInbox(layout, rec.id, config.inbox.max_body_bytes, predecessors(layout, rec));
  return mail.count ? runtime.addContext(mail.text) : null;
}

async function turnEnd(
  layout: Layout,
  config: Config,
  runtime: Runtime,
  rec: AgentRecord,
  payload: Record<string, unknown>,
): Promise<HookReply | null> {
  const answer = runtime.finalAnswer(payload);
  const usage = await usageWithAnswer(runtime, payload, rec, !!answer?.trim());
  if (continues(layout, rec) < MAX_MAIL_CONTINUES) {
    const mail = await drainInbox(layout, rec.id, config.inbox.max_body_bytes, predecessors(layout, rec));
    if (mail.count) {
      countContinue(layout, rec);
      if (usage) updateQuietly(layout, rec.id, usage);
      return runtime.continueWith(mail.text);
    }
  }
  if (rec.lastTask && rec.lastTask.task >= rec.task) return null; // already ended (a repeated Stop)
  // A turn the vendor API ended with an error is the shim's to end, from the CLI's session
  // file: failed, never completed. Gemini runs this hook for such a turn too, with no answer,
  // and may record the error a moment after: a turn without an answer is looked at for 3 s.
  if (await turnFailed(layout, runtime, rec, payload, answer?.trim() ? 0 : 3_000)) {
    if (usage) updateQuietly(layout, rec.id, usage);
    return null;
  }
  await endVendorTask(layout, config, rec.id, {
    status: 'completed',
    text: answer ?? '',
    reason: null,
    ...(usage ? { patch: usage } : {}),
  });
  return null;
}

async function turnFailed(
  layout: Layout,
  runtime: Runtime,
  rec: AgentRecord,
  payload: Record<string, unknown>,
  waitMs: number,
): Promise<boolean> {
  const end = Date.now() + waitMs;
  for (;;) {
    const file = runtime.transcriptPath(payload) || newestSessionFile(runtime, layout.runtimeDir(rec.id));
    try {
      if (file && lastTurnFailure(runtime, readFileSync(file, 'utf8'))) return true;
    } catch {
      /* not written yet */
    }
    if (Date.now() >= end) return false;
    await sleep(200);
  }
}

/**
 * The agent's own usage once its session file holds this turn's answer (`answered`): Claude 2.1 runs its turn-end hook
 * before it has written the answer's line there, and a hook answered at once in the shim (door-send.ts) read the turn
 * without it — a resumed agent's first turn counted none. Looked at every 25 ms, for 1 s at most; a CLI with no
 * session file to read is not waited for.
 */
async function usageWithAnswer(
  runtime: Runtime,
  payload: Record<string, unknown>,
  rec: AgentRecord,
  answered: boolean,
): Promise<Pick<AgentRecord, 'usage' | 'turns'> | undefined> {
  const end = Date.now() + 1_000;
  for (;;) {
    const usage = readUsage(runtime, payload);
    if (!answered || !usage || usage.turns > rec.turns || Date.now() >= end) return usage;
    await sleep(25);
  }
}

/** The agent's own usage so far, from the session file the payload names (an inherited part left out). */
function readUsage(
  runtime: Runtime,
  payload: Record<string, unknown>,
): Pick<AgentRecord, 'usage' | 'turns'> | undefined {
  return ownUsage(runtime, runtime.transcriptPath(payload));
}

/** Mail continuations used by the current task: a chatty peer cannot keep an agent busy forever. */
function continues(layout: Layout, rec: AgentRecord): number {
  try {
    const [task, n] = readFileSync(counterFile(layout, rec.id), 'utf8').split(' ').map(Number);
    return task === rec.task ? (n ?? 0) : 0;
  } catch {
    return 0;
  }
}

function countContinue(layout: Layout, rec: AgentRecord): void {
  try {
    writeFileSync(counterFile(layout, rec.id), `${rec.task} ${continues(layout, rec) + 1}`);
  } catch {
    /* the cap is best effort */
  }
}

function counterFile(layout: Layout, id: string): string {
  return join(layout.runtimeDir(id), 'mail-continues');
}
