import { appendFileSync, readFileSync } from 'node:fs';
import type { Log } from '../audit/logger.js';
import type { Config } from '../config/schema.js';
import type { Definition } from '../definitions/types.js';
import { errorMessage, FlotillaError } from '../errors.js';
import { agentEnvironment } from '../fleet/agent-env.js';
import type { AgentRecord } from '../fleet/record.js';
import { readRecord } from '../fleet/registry.js';
import { adoptUnread, predecessors } from '../inbox/adopt.js';
import type { Layout } from '../layout/layout.js';
import { holdReserve } from '../lifecycle/reserve.js';
import { markStarting as markProcessStarting } from '../lifecycle/starting.js';
import type { ModelMessage } from '../loop/types.js';
import type { TranscriptEntry } from '../transcript/entries.js';
import type { TranscriptWriter } from '../transcript/writer.js';
import { auditHookRun } from '../hooks/audit-run.js';
import type { HookContext } from '../hooks/run-hooks.js';
import { memoryDir, readMemory } from './memory.js';
import { buildSystemPrompt } from './system-prompt.js';

/**
 * The steps of a harness's start-up (harness/start.ts runs them in order), each named for
 * what it sets up. None of them runs the model or a tool.
 */

/**
 * Every value the fleet was granted stays redacted in this process, whoever held it (docs/security-trust.md
 * "Redaction").
 */
export async function redactFleetSecrets(layout: Layout): Promise<void> {
  const [{ fleetRedactor }, { setFleetRedactor }] = await Promise.all([
    import('../secrets/digests.js'),
    import('../secrets/redact.js'),
  ]);
  setFleetRedactor(fleetRedactor(layout));
}

/** The agent's process has begun (§5): the full-disk reserve is held, and its record says `starting`. */
export function markStarting(layout: Layout, id: string, log: Log): AgentRecord {
  const rec = markProcessStarting(layout, id);
  if (!holdReserve(layout, rec.id))
    log.warn({}, 'no room for the 64 KiB reserve that lets an agent end cleanly on a full disk');
  return rec;
}

/**
 * What this agent's tools run (and the children they spawn) find their way back here with;
 * also this process's own environment from now on. A secret reaches a command only through
 * a grant (§11): variables holding secret values are not passed on.
 */
export async function toolEnvironment(
  layout: Layout,
  config: Config,
  rec: AgentRecord,
  env: NodeJS.ProcessEnv,
  secretKeys: readonly string[] = [],
): Promise<NodeJS.ProcessEnv> {
  const childEnv: NodeJS.ProcessEnv = { ...env, ...agentEnvironment(layout, rec, env.PATH) };
  delete childEnv.FLOTILLA_SLOT;
  const { secretSourceVars } = await import('../secrets/keys.js');
  for (const name of secretSourceVars([...rec.effectivePolicy.secrets, ...secretKeys], config)) delete childEnv[name];
  Object.assign(process.env, childEnv);
  return childEnv;
}

/** The definition's memory folder and what is in it (§10), when it has a scope. */
export function agentMemory(
  layout: Layout,
  config: Config,
  definition: Definition,
  env: NodeJS.ProcessEnv,
  log: Log,
): { dir?: string; text?: string } {
  const scope = definition.memory ?? config.agents.default_memory_scope ?? undefined;
  if (!scope) return {};
  const dir = memoryDir(layout, scope, definition.name, env);
  const text = readMemory(dir, (m) => log.warn({}, m));
  return { dir, ...(text ? { text } : {}) };
}

/** The agent's model; childEnv, so a scripted one templating {{env.X}} never sees secret values. */
export async function loadModel(rec: AgentRecord, config: Config, childEnv: NodeJS.ProcessEnv, env: NodeJS.ProcessEnv) {
  const { createModel } = await import('../model/create.js');
  try {
    return await createModel(rec.model, config, childEnv, { cwd: rec.cwd, ...scriptLog(env) });
  } catch (err) {
    // The model's own errors already name the model: say it once.
    const why = errorMessage(err);
    throw new FlotillaError(why.includes(`'${rec.model}'`) ? why : `cannot start model '${rec.model}': ${why}`, {
      code: 'model',
      cause: err,
    });
  }
}

export interface OpenedHistory {
  transcript: TranscriptWriter | null;
  /** The conversation so far: empty, or the resumed agent's. */
  history: ModelMessage[];
  /** Mail the resumed transcript already surfaced: not shown twice (§4). */
  recorded: { files: Set<string>; ids: Set<string> };
}

/**
 * The transcript and its sidecar (§8). Resume: the old conversation becomes this
 * transcript's start and the model's history, and the old agent's unread mail is adopted.
 */
export async function openHistory(
  layout: Layout,
  config: Config,
  rec: AgentRecord,
  definition: Definition,
  resumed: TranscriptEntry[],
  log: Log,
): Promise<OpenedHistory> {
  const { openTranscript } = await import('../transcript/writer.js');
  const transcript = config.transcripts.enabled
    ? openTranscript(
        layout,
        {
          agent_id: rec.id,
          def_name: definition.name,
          parent_id: rec.parentId,
          model: rec.model,
          cwd: rec.cwd,
          resumed_from: rec.resumedFrom,
        },
        { onError: (err) => log.error({ err: err.message }, 'transcript write failed') },
      )
    : null;
  if (transcript) {
    const { writeMeta } = await import('../transcript/meta.js');
    try {
      writeMeta(layout, {
        agent_id: rec.id,
        agent_name: rec.name,
        def_name: definition.name,
        status: rec.status,
        exit_reason: rec.exitReason,
        started_at: rec.startedAt ?? new Date().toISOString(),
        finished_at: rec.finishedAt,
        resumed_from: rec.resumedFrom,
        turns_used: rec.turns,
        model: rec.model,
        usage: rec.usage,
      });
    } catch (err) {
      log.error({ err: errorMessage(err) }, 'meta write failed');
    }
  }
  const previous = resumed.filter((e) => e.type !== 'end');
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
  return { transcript, history: historyFromTranscript(previous), recorded };
}

/** `FLOTILLA_SCRIPT_LOG=<file>`: every scripted-model call's input as a JSON line, for tests and debugging scripts. */
function scriptLog(env: NodeJS.ProcessEnv): {
  scripted?: { onCall: (call: { prompt: unknown; turn: number; reply: number | undefined; tools: string[] }) => void };
} {
  const file = env.FLOTILLA_SCRIPT_LOG;
  if (!file) return {};
  return {
    scripted: {
      onCall: (call) =>
        appendFileSync(
          file,
          JSON.stringify({
            ts: Date.now(),
            pid: process.pid,
            turn: call.turn,
            reply: call.reply ?? null,
            tools: call.tools,
            prompt: call.prompt,
          }) + '\n',
        ),
    },
  };
}

/** A damaged parent or root record must not stop an agent: it only names them in the prompt. */
export function readRecordOrNull(layout: Layout, id: string, log?: Log): AgentRecord | null {
  try {
    return readRecord(layout, id) ?? null;
  } catch (err) {
    log?.warn({ agent: id, err: errorMessage(err) }, 'record unreadable');
    return null;
  }
}

/** Who the hooks run for (§9): this agent, each run audited as `hook_run`, a failing one a WARN. */
export function agentHookContext(layout: Layout, rec: AgentRecord, definition: Definition, log: Log): HookContext {
  return {
    agentId: rec.id,
    agentName: definition.name,
    parentId: rec.parentId,
    cwd: rec.cwd,
    onRun: (r) => auditHookRun(layout, rec.id, r),
    onWarn: (m: string) => log.warn({}, m),
  };
}

/** The system prompt (§6): who the agent is and where it stands in its tree, its body, its tools and its memory. */
export function agentSystemPrompt(opts: {
  layout: Layout;
  config: Config;
  rec: AgentRecord;
  definition: Definition;
  tools: readonly string[];
  memory: string | undefined;
  log: Log;
}): string {
  const { layout, config, rec, definition, log } = opts;
  const parent = rec.parentId ? readRecordOrNull(layout, rec.parentId, log) : null;
  const root = rec.rootId !== rec.id ? readRecordOrNull(layout, rec.rootId, log) : null;
  return buildSystemPrompt({
    identity: {
      id: rec.id,
      name: definition.name,
      description: definition.description,
      depth: rec.depth,
      maxDepth: config.limits.max_depth,
      parent: parent ? { id: parent.id, name: parent.name } : null,
      root: root ? { id: root.id, name: root.name } : null,
      cwd: rec.cwd,
      mode: rec.mode,
    },
    body: definition.body,
    tools: opts.tools,
    ...(opts.memory ? { memory: opts.memory } : {}),
  });
}

export function readTask(layout: Layout, id: string): string {
  try {
    return readFileSync(layout.taskFile(id), 'utf8');
  } catch {
    return '';
  }
}

export { predecessors };
