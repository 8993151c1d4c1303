import { createAgentLogger, type Log } from '../audit/logger.js';
import type { Config } from '../config/schema.js';
import type { Definition } from '../definitions/types.js';
import type { AgentRecord } from '../fleet/record.js';
import { getRecord } from '../fleet/registry.js';
import type { Layout } from '../layout/layout.js';
import type { TranscriptEntry } from '../transcript/entries.js';
import type { AgentSession } from './session.js';
import type { SessionEvent } from './session-types.js';
import { openAgentInbox } from './start-inbox.js';
import { newAgentSession } from './start-session.js';
import {
  agentHookContext,
  agentMemory,
  agentSystemPrompt,
  loadModel,
  markStarting,
  openHistory,
  readTask,
  redactFleetSecrets,
  toolEnvironment,
} from './start-steps.js';
import { equipAgent } from './start-tools.js';
import type { WorkSlot } from './work-slot.js';

/** A started agent: its session, its record as start-up left it, and the task it was given. */
export interface StartedAgent {
  session: AgentSession;
  record: AgentRecord;
  definition: Definition;
  prompt: string;
  log: Log;
  scripted: boolean;
}

/**
 * Turns a registered agent into a running session: the harness's start-up (§5.6, §6).
 * The caller has already admitted the agent and holds its slot. Each step lives in a file
 * named for it: start-steps (record, environment, model, history), start-inbox, start-tools
 * (tools, approvals, gate), start-session (the session and its endings).
 */
export async function startAgent(opts: {
  layout: Layout;
  config: Config;
  record: AgentRecord;
  definition: Definition;
  /** Held while the agent works; given back while it is idle (§5.2). */
  slot: WorkSlot;
  interactive: boolean;
  /** The transcript being resumed (§8): copied into this agent's transcript as its history. */
  previous?: TranscriptEntry[];
  env?: NodeJS.ProcessEnv;
  /** Secret keys of the fleet's definitions, beside the agent's own: their variables are not passed on (§11). */
  secretKeys?: readonly string[];
}): Promise<StartedAgent> {
  const { layout, config, definition } = opts;
  const env = opts.env ?? process.env;
  await redactFleetSecrets(layout);
  const log = await createAgentLogger(layout, opts.record.id);
  const rec = markStarting(layout, opts.record.id, log);
  const childEnv = await toolEnvironment(layout, config, rec, env, opts.secretKeys);
  const memory = agentMemory(layout, config, definition, env, log);
  const model = await loadModel(rec, config, childEnv, env);
  const { transcript, history, recorded } = await openHistory(
    layout,
    config,
    rec,
    definition,
    opts.previous ?? [],
    log,
  );
  const ref: { session?: AgentSession } = {};
  const inbox = await openAgentInbox({ layout, config, rec, log, transcript, recorded, session: () => ref.session });
  const hookContext = agentHookContext(layout, rec, definition, log);
  // The approvals need the session to show questions; the session needs the approvals' gate.
  const emit = (e: SessionEvent): void => ref.session?.emit(e);
  const { approvals, secrets, tools, gate } = await equipAgent({
    layout,
    config,
    rec,
    definition,
    inbox,
    hookContext,
    log,
    env,
    childEnv,
    memoryDir: memory.dir,
    emit,
  });
  const system = agentSystemPrompt({
    layout,
    config,
    rec,
    definition,
    log,
    tools: tools.map((t) => t.name),
    memory: memory.text,
  });
  const session = await newAgentSession({
    layout,
    config,
    rec,
    definition,
    model,
    system,
    tools,
    history,
    log,
    transcript,
    inbox,
    gate,
    approvals,
    secrets,
    hookContext,
    slot: opts.slot,
  });
  ref.session = session;
  const { runLifecycleHooks } = await import('../hooks/run-hooks.js');
  await runLifecycleHooks('start', config.hooks.start, hookContext);
  session.started();
  return {
    session,
    record: getRecord(layout, rec.id),
    definition,
    prompt: readTask(layout, rec.id),
    log,
    scripted: rec.scripted,
  };
}
