import type { LanguageModelV3 } from '@ai-sdk/provider';
import type { Log } from '../audit/logger.js';
import type { Config } from '../config/schema.js';
import type { Definition } from '../definitions/types.js';
import type { AgentRecord } from '../fleet/record.js';
import type { HookContext } from '../hooks/run-hooks.js';
import type { Layout } from '../layout/layout.js';
import type { ModelMessage } from '../loop/types.js';
import type { Approvals } from '../approvals/ask.js';
import { DEFAULT_BOARD } from '../tasks/task.js';
import type { Tool } from '../tools/types.js';
import type { TranscriptWriter } from '../transcript/writer.js';
import type { createGate } from './gate.js';
import type { HarnessInboxPort } from './inbox-port.js';
import type { SecretBroker } from './secret-broker.js';
import { AgentSession } from './session.js';
import type { BoardPort, SessionDeps } from './session-deps.js';
import { sessionEndings } from './session-endings.js';
import { teammateIdle } from './teammate-idle.js';
import type { WorkSlot } from './work-slot.js';

/**
 * The session a starting agent runs in (harness/session.ts), wired to what start-up opened:
 * its endings, its hooks around tools and model calls, its children's supervision, its idle
 * hooks and, for a teammate, its board.
 */
export async function newAgentSession(opts: {
  layout: Layout;
  config: Config;
  rec: AgentRecord;
  definition: Definition;
  model: LanguageModelV3;
  system: string;
  tools: Tool[];
  history: ModelMessage[];
  log: Log;
  transcript: TranscriptWriter | null;
  inbox: HarnessInboxPort;
  gate: ReturnType<typeof createGate>;
  approvals: Approvals;
  secrets: SecretBroker | undefined;
  hookContext: HookContext;
  slot: WorkSlot;
}): Promise<AgentSession> {
  const { layout, config, rec, log, transcript, hookContext, approvals, secrets } = opts;
  // A child whose harness dies without ending itself is reaped by its parent within ~2 s (§5.7).
  const { superviseChildren } = await import('../lifecycle/supervise.js');
  const stopSupervising = superviseChildren(layout, config, rec.id);
  const ending = await sessionEndings({
    id: rec.id,
    layout,
    config,
    transcript,
    log,
    hookContext,
    slot: opts.slot,
    stop: (reason) => {
      stopSupervising();
      secrets?.close(reason);
    },
  });
  const onIdle = teammateIdle(layout, config, rec, hookContext);
  const board = await teammateBoard(layout, config, rec, log);
  return new AgentSession({
    layout,
    config,
    record: rec,
    model: opts.model,
    system: opts.system,
    tools: opts.tools,
    history: opts.history,
    log,
    transcript,
    inbox: opts.inbox,
    gate: opts.gate,
    ...(await toolAndModelHooks(layout, config, rec, opts.definition, hookContext)),
    onApprovalAnswer: (a) => {
      approvals.answer(a);
      secrets?.answer(a);
    },
    // A teammate (§15) stays between tasks even headless: the board is its work.
    oneshot: rec.mode !== 'interactive' && !rec.autoClaim,
    slot: opts.slot,
    ...(onIdle ? { onIdle } : {}),
    ...(board ? { board } : {}),
    ...ending,
  });
}

/** What the session runs after each tool call (the PostToolUse hooks) and before each model call (the fleet budget). */
async function toolAndModelHooks(
  layout: Layout,
  config: Config,
  rec: AgentRecord,
  definition: Definition,
  hookContext: HookContext,
): Promise<Pick<SessionDeps, 'afterTool' | 'beforeModelCall'>> {
  const { fleetBudgetRefusal } = await import('../spawn/budget.js');
  const { runPostToolUse } = await import('../hooks/run-hooks.js');
  return {
    afterTool: (call, result) =>
      runPostToolUse(
        definition.hooks,
        { name: call.name, input: call.input, output: result.output, isError: !!result.isError },
        hookContext,
      ),
    // Every host's agents of the tree count (§11); a bus that cannot answer leaves this host's count.
    beforeModelCall: async () =>
      (await fleetBudgetRefusal(layout, config, rec.rootId, { unreachable: 'local' }))?.message,
  };
}

/** An `auto_claim` agent's board (§15): where it takes work when idle; none for other agents. */
async function teammateBoard(
  layout: Layout,
  config: Config,
  rec: AgentRecord,
  log: Log,
): Promise<BoardPort | undefined> {
  if (!rec.autoClaim) return undefined;
  const { boardPort } = await import('./teammate.js');
  return boardPort(layout, rec.id, rec.board ?? DEFAULT_BOARD, log, config.inbox.max_body_bytes);
}
