import { appendFileSync, mkdirSync, readdirSync, readFileSync, renameSync } from 'node:fs';
import { join } from 'node:path';
import { audit } from '../audit/audit.js';
import { createAgentLogger, type Log } from '../audit/logger.js';
import type { Config } from '../config/schema.js';
import type { Definition } from '../definitions/types.js';
import { errorMessage, FlotillaError } from '../errors.js';
import { agentEnvironment } from '../fleet/agent-env.js';
import type { AgentRecord } from '../fleet/record.js';
import { getRecord, readRecord, updateRecord } from '../fleet/registry.js';
import { processStartTime, selfPid } from '../fleet/proc.js';
import { maildir } from '../inbox/maildir.js';
import type { Layout } from '../layout/layout.js';
import type { ModelMessage } from '../loop/types.js';
import type { TranscriptEntry } from '../transcript/entries.js';
import type { Tool } from '../tools/types.js';
import { holdReserve } from '../lifecycle/reserve.js';
import { Approvals } from './approvals.js';
import { ancestorLacking, SecretBroker } from './secret-broker.js';
import { buildTools } from './build-tools.js';
import { finishAgent } from './finish.js';
import { createGate } from './gate.js';
import type { ShellClassifier } from '../policy/shell/classify.js';
import { openInboxPort } from './inbox-port.js';
import { memoryDir, readMemory } from './memory.js';
import { AgentSession } from './session.js';
import type { WorkSlot } from './work-slot.js';
import { buildSystemPrompt } from './system-prompt.js';

/**
 * Turns a registered agent into a running session: the harness's start-up (§5.6, §6).
 * The caller has already admitted the agent and holds its slot.
 */
export interface StartedAgent {
  session: AgentSession;
  record: AgentRecord;
  definition: Definition;
  prompt: string;
  log: Log;
  scripted: boolean;
}

export async function startAgent(opts: {
  layout: Layout;
  config: Config;
  record: AgentRecord;
  definition: Definition;
  /** Held while the agent works; given back while it is idle (issue 14). */
  slot: WorkSlot;
  interactive: boolean;
  /** The transcript being resumed (§8): copied into this agent's transcript as its history. */
  previous?: TranscriptEntry[];
  env?: NodeJS.ProcessEnv;
}): Promise<StartedAgent> {
  const { layout, config, definition } = opts;
  const env = opts.env ?? process.env;
  const log = await createAgentLogger(layout, opts.record.id);
  let rec = updateRecord(layout, opts.record.id, {
    status: 'starting', pid: selfPid(), pidStartTime: processStartTime(selfPid()), startedAt: new Date().toISOString(),
  });
  audit(layout, { event: 'agent_start', agent: rec.id, parent: rec.parentId ?? 'human', depth: rec.depth, model: rec.model, mode: rec.mode });
  if (!holdReserve(layout, rec.id)) log.warn({}, 'no room for the 64 KiB reserve that lets an agent end cleanly on a full disk');

  // What this agent's tools run (and the children they spawn) find their way back here with.
  const childEnv: NodeJS.ProcessEnv = { ...env, ...agentEnvironment(layout, rec, env.PATH) };
  delete childEnv.FLOTILLA_SLOT;
  // A secret reaches a command only through a grant (§11): variables holding secret values in
  // this process's own environment are not passed on to commands or children.
  const { secretSourceVars } = await import('../secrets/keys.js');
  for (const name of secretSourceVars(rec.effectivePolicy.secrets, config)) delete childEnv[name];
  Object.assign(process.env, childEnv);

  const scope = definition.memory ?? config.agents.default_memory_scope ?? undefined;
  const memDir = scope ? memoryDir(layout, scope, definition.name, env) : undefined;
  const memory = memDir ? readMemory(memDir, (m) => log.warn({}, m)) : undefined;

  const { createModel } = await import('../model/create.js');
  let model;
  try {
    // childEnv: the model (a scripted one templates {{env.X}}) never sees variables holding secret values.
    model = await createModel(rec.model, config, childEnv, { cwd: rec.cwd, ...scriptLog(env) });
  } catch (err) {
    // The model's own errors already name the model: say it once.
    const why = errorMessage(err);
    throw new FlotillaError(why.includes(`'${rec.model}'`) ? why : `cannot start model '${rec.model}': ${why}`, { code: 'model', cause: err });
  }

  // A damaged parent or root record must not stop this agent: it only names them in the prompt.
  const parent = rec.parentId ? readRecordOrNull(layout, rec.parentId, log) : null;
  const root = rec.rootId !== rec.id ? readRecordOrNull(layout, rec.rootId, log) : null;
  const { openTranscript } = await import('../transcript/writer.js');
  const transcript = config.transcripts.enabled
    ? openTranscript(layout, { agent_id: rec.id, def_name: definition.name, parent_id: rec.parentId, model: rec.model, cwd: rec.cwd, resumed_from: rec.resumedFrom },
      { onError: (err) => log.error({ err: err.message }, 'transcript write failed') })
    : null;
  const { writeMeta, updateMeta } = await import('../transcript/meta.js');
  const meta = () => ({
    agent_id: rec.id, agent_name: rec.name, def_name: definition.name, status: rec.status, exit_reason: rec.exitReason,
    started_at: rec.startedAt ?? new Date().toISOString(), finished_at: rec.finishedAt, resumed_from: rec.resumedFrom, turns_used: rec.turns, model: rec.model,
    usage: rec.usage,
  });
  if (transcript) {
    try { writeMeta(layout, meta()); } catch (err) { log.error({ err: errorMessage(err) }, 'meta write failed'); }
  }

  // Resume: the old conversation becomes this transcript's start, and the old agent's
  // unread mail is adopted; what the old transcript already surfaced is not shown twice (§4).
  const previous = (opts.previous ?? []).filter((e) => e.type !== 'end');
  const recorded = { files: new Set<string>(), ids: new Set<string>() };
  for (const e of previous) {
    const { seq: _seq, ts: _ts, ...entry } = e;
    transcript?.append(entry);
    if (e.type === 'surfaced' && e.source === 'inbox') {
      for (const id of e.ids) recorded.ids.add(id);
      for (const f of e.files ?? []) recorded.files.add(f);
    }
  }
  if (rec.resumedFrom) adoptUnread(layout, rec.resumedFrom, rec.id);
  const { historyFromTranscript } = await import('../transcript/history.js');
  const history: ModelMessage[] = historyFromTranscript(previous);
  const { sweepStaleTemp } = await import('../inbox/maildir.js');
  sweepStaleTemp(layout, rec.id);
  const inbox = await openInboxPort(layout, rec.id, config, log, recorded, predecessors(layout, rec), ({ ids, files }) => (
    transcript ? transcript.append({ type: 'surfaced', source: 'inbox', via: 'tool', ids, files, text: `read through a tool: ${ids.join(', ')}` }) : true
  ));
  const hookContext = {
    agentId: rec.id, agentName: definition.name, parentId: rec.parentId, cwd: rec.cwd,
    onRun: (r: { hook: string; command: string; exitCode: number | null; durationMs: number; timedOut: boolean }) =>
      audit(layout, { event: 'hook_run', agent: rec.id, hook: r.hook, command: r.command, exit_code: r.exitCode, duration_ms: Math.round(r.durationMs), timed_out: r.timedOut }),
    onWarn: (m: string) => log.warn({}, m),
  };

  // The approvals need the session to show questions; the session needs the approvals' gate.
  const ref: { session?: AgentSession } = {};
  const emit: ConstructorParameters<typeof Approvals>[3] = (e) => ref.session?.emit(e);
  const approvals = new Approvals(layout, rec.id, config.agents.approval_timeout_secs, emit, (waiting) => {
    try { rec = updateRecord(layout, rec.id, { status: waiting ? 'waiting_approval' : 'working' }); } catch { /* ended meanwhile */ }
  });
  const secrets = rec.effectivePolicy.secrets.length > 0 ? new SecretBroker({
    layout, config, agentId: rec.id, keys: rec.effectivePolicy.secrets, ttlSecs: definition.ttlSecs, env, log, emit,
    noApprover: rec.background ? 'this is a background agent' : rec.mode === 'headless' ? 'this agent runs headless' : null,
    ancestorLacking: (key) => ancestorLacking(layout, rec, key),
    setWaiting: (waiting) => {
      try { rec = updateRecord(layout, rec.id, { status: waiting ? 'waiting_approval' : 'working' }); } catch { /* ended meanwhile */ }
    },
    onGrants: (grants) => { rec = updateRecord(layout, rec.id, { secretGrants: grants }); },
  }) : undefined;
  const tools: Tool[] = await buildTools({ layout, config, record: rec, env: childEnv, memoryDir: memDir, inbox, log, ...(secrets ? { secrets } : {}) });
  const { withheldRules } = await import('../policy/tool-policy.js');
  const policy = { tools: rec.effectivePolicy.tools, withheld: withheldRules(definition.tools, config.agents.default_disallowed_tools, rec.effectivePolicy.tools) };
  // The bash grammar loads on the first shell command, never at start-up (§14).
  let classifier: Promise<ShellClassifier> | undefined;
  const shellClassifier = () => (classifier ??= import('./shell-parser.js').then((m) => m.loadShellClassifier(config.security.deny_commands, childEnv)));
  const gate = createGate({
    layout, record: rec, policy, definition, approvals, canAsk: !rec.background && rec.mode !== 'headless', hookContext, log,
    shellClassifier, opaqueCommands: config.security.opaque_commands,
  });
  const system = buildSystemPrompt({
    identity: {
      id: rec.id, name: definition.name, description: definition.description, depth: rec.depth, maxDepth: config.limits.max_depth,
      parent: parent ? { id: parent.id, name: parent.name } : null, root: root ? { id: root.id, name: root.name } : null, cwd: rec.cwd, mode: rec.mode,
    },
    body: definition.body, tools: tools.map((t) => t.name), ...(memory ? { memory } : {}),
  });

  const { treeBudgetRefusal } = await import('../spawn/budget.js');
  const { runPostToolUse, runLifecycleHooks } = await import('../hooks/run-hooks.js');
  const { stopHookOnce } = await import('../hooks/stop-once.js');
  const { writeOutput, writeTaskResult } = await import('../transcript/output.js');
  const { sendCompletionOnce } = await import('../lifecycle/completion.js');
  const prompt = readTask(layout, rec.id);
  // A child whose harness dies without ending itself is reaped by its parent within ~2 s (§5.7).
  const { superviseChildren } = await import('../lifecycle/supervise.js');
  const stopSupervising = superviseChildren(layout, config, rec.id);

  const session = new AgentSession({
    layout, config, record: rec, model, system, tools, history, log, transcript, inbox,
    gate,
    afterTool: (call, result) => runPostToolUse(definition.hooks, { name: call.name, input: call.input, output: result.output, isError: !!result.isError }, hookContext),
    beforeModelCall: async () => treeBudgetRefusal(layout, rec.rootId, config.budget)?.message,
    onApprovalAnswer: (a) => { approvals.answer(a); secrets?.answer(a); },
    oneshot: rec.mode !== 'interactive',
    slot: opts.slot,
    writeOutput: (task, text) => {
      try { return writeOutput(layout, rec.id, text, config.output.max_bytes, task).path; } catch (err) { log.error({ err: errorMessage(err) }, 'output write failed'); return null; }
    },
    complete: async (r, result, text) => {
      rec = r;
      try { writeTaskResult(layout, r.id, result); } catch (err) { log.error({ err: errorMessage(err) }, 'task result write failed'); }
      await sendCompletionOnce(layout, r, result, { text, maxBodyBytes: config.inbox.max_body_bytes });
      if (transcript) try { updateMeta(layout, r.id, { status: r.status, turns_used: r.turns, usage: r.usage }); } catch { /* logged by writer */ }
    },
    finish: async (r, status, reason, open) => {
      stopSupervising();
      secrets?.close(reason);
      let outputPath: string | null = null;
      if (open?.text) {
        try { outputPath = writeOutput(layout, r.id, open.text, config.output.max_bytes, r.task).path; } catch (err) { log.error({ err: errorMessage(err) }, 'output write failed'); }
      }
      rec = await finishAgent({
        layout, config, record: r, status, reason, log,
        openTask: open ? { text: open.text, outputPath } : null,
        appendEnd: (s, why) => { transcript?.append({ type: 'end', status: s, exit_reason: why }); transcript?.close(); },
        runStopHooks: async (s, why) => {
          await stopHookOnce(layout, r.id, () => runLifecycleHooks('stop', config.hooks.stop, { ...hookContext, status: s, exitReason: why }));
        },
      });
      if (transcript) try { updateMeta(layout, r.id, { status: rec.status, exit_reason: rec.exitReason, finished_at: rec.finishedAt, turns_used: rec.turns, usage: rec.usage }); } catch { /* logged */ }
      opts.slot.release();
      // The session shows this to the pane, which then lets the process exit (§5.9: no
      // terminal record while its harness lives).
      return rec;
    },
  });
  ref.session = session;
  await runLifecycleHooks('start', config.hooks.start, hookContext);
  rec = updateRecord(layout, rec.id, { status: 'working' });
  return { session, record: getRecord(layout, rec.id), definition, prompt, log, scripted: rec.scripted };
}

/** `FLOTILLA_SCRIPT_LOG=<file>`: every scripted-model call's input as a JSON line, for tests and debugging scripts. */
function scriptLog(env: NodeJS.ProcessEnv): { scripted?: { onCall: (call: { prompt: unknown; turn: number; reply: number | undefined; tools: string[] }) => void } } {
  const file = env.FLOTILLA_SCRIPT_LOG;
  if (!file) return {};
  return { scripted: { onCall: (call) => appendFileSync(file, JSON.stringify({ ts: Date.now(), pid: process.pid, turn: call.turn, reply: call.reply ?? null, tools: call.tools, prompt: call.prompt }) + '\n') } };
}

/** The agents this one continues (resume chain), whose adopted mail is addressed to them. */
function predecessors(layout: Layout, rec: AgentRecord): string[] {
  const out: string[] = [];
  for (let id = rec.resumedFrom; id && !out.includes(id) && out.length < 64; id = readRecordOrNull(layout, id)?.resumedFrom ?? null) out.push(id);
  return out;
}

/** Moves the unread messages of a resumed agent into its successor's new/ (same names, atomic renames). */
function adoptUnread(layout: Layout, fromId: string, toId: string): void {
  const from = maildir(layout, fromId).new;
  const to = maildir(layout, toId).new;
  let names: string[];
  try { names = readdirSync(from); } catch { return; }
  mkdirSync(to, { recursive: true });
  for (const name of names) {
    try { renameSync(join(from, name), join(to, name)); } catch { /* claimed meanwhile */ }
  }
}

function readRecordOrNull(layout: Layout, id: string, log?: Log): AgentRecord | null {
  try {
    return readRecord(layout, id) ?? null;
  } catch (err) {
    log?.warn({ agent: id, err: errorMessage(err) }, 'record unreadable');
    return null;
  }
}

function readTask(layout: Layout, id: string): string {
  try {
    return readFileSync(layout.taskFile(id), 'utf8');
  } catch {
    return '';
  }
}
