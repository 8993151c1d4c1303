import { audit } from '../audit/audit.js';
import { createAgentLogger, type Log } from '../audit/logger.js';
import type { Config } from '../config/schema.js';
import type { Definition } from '../definitions/types.js';
import { errorMessage } from '../errors.js';
import type { AgentRecord } from '../fleet/record.js';
import { getRecord, updateRecord } from '../fleet/registry.js';
import type { HookContext } from '../hooks/run-hooks.js';
import type { Layout } from '../layout/layout.js';
import { DEFAULT_BOARD } from '../tasks/task.js';
import type { ShellClassifier } from '../policy/shell/classify.js';
import type { TranscriptEntry } from '../transcript/entries.js';
import type { TranscriptWriter } from '../transcript/writer.js';
import type { Tool } from '../tools/types.js';
import { Approvals } from '../approvals/ask.js';
import { buildTools } from './build-tools.js';
import { finishAgent } from './finish.js';
import { createGate } from './gate.js';
import { openInboxPort } from './inbox-port.js';
import { agentReadScope, readScopeCheck } from './read-scope.js';
import { ancestorLacking, SecretBroker } from './secret-broker.js';
import { AgentSession } from './session.js';
import type { SessionDeps } from './session-deps.js';
import type { SessionEvent } from './session-types.js';
import {
  agentMemory,
  loadModel,
  markStarting,
  openHistory,
  predecessors,
  readRecordOrNull,
  readTask,
  toolEnvironment,
} from './start-steps.js';
import { buildSystemPrompt } from './system-prompt.js';
import { teammateIdle } from './teammate-idle.js';
import type { WorkSlot } from './work-slot.js';

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
  // Every value the fleet was granted stays redacted here, whoever held it (docs/security-trust.md "Redaction").
  const [{ fleetRedactor }, { setFleetRedactor }] = await Promise.all([
    import('../secrets/digests.js'),
    import('../secrets/redact.js'),
  ]);
  setFleetRedactor(fleetRedactor(layout));
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
  const { sweepStaleTemp } = await import('../inbox/maildir.js');
  sweepStaleTemp(layout, rec.id);
  const inbox = await openInboxPort(
    layout,
    rec.id,
    config,
    log,
    recorded,
    predecessors(layout, rec),
    ({ ids, files }) =>
      transcript
        ? transcript.append({
            type: 'surfaced',
            source: 'inbox',
            via: 'tool',
            ids,
            files,
            text: `read through a tool: ${ids.join(', ')}`,
          })
        : true,
  );
  // On a bus, this harness keeps its spool (and its predecessors') fed from it until it closes (§18).
  const [{ busFor, closeBuses }, { keepPresence }] = await Promise.all([
    import('../bus/open.js'),
    import('../bus/presence.js'),
  ]);
  const bus = busFor(layout, config);
  const stopFeeding = await bus.mail.receive([rec.id, ...predecessors(layout, rec)]);
  // Its host's heartbeat and its record on the bus while it lives (§18); the last write reaches it as the bus closes.
  // Beating, it also marks silent hosts' agents lost; marked lost itself while this host was silent, it ends (§17.8).
  const ref: { session?: AgentSession } = {};
  const lost = bus.kind === 'nats' ? await import('../lifecycle/lost.js') : null;
  const stopPresence = keepPresence(
    layout,
    bus,
    rec.id,
    lost
      ? {
          beat: () => lost.markLostHosts(layout, bus),
          lost: () => {
            if (!ref.session) return false;
            log.warn({}, lost.MARKED_LOST_REASON);
            void ref.session.shutdown('cancelled', lost.MARKED_LOST_REASON);
            return true;
          },
        }
      : {},
  );
  const closeInbox = inbox.close.bind(inbox);
  inbox.close = async () => {
    stopPresence();
    await closeInbox();
    await stopFeeding();
    await closeBuses();
    // The board's and leases' connections (bus/shared.ts), opened by a task tool or an edit's lease.
    await (await import('../bus/shared.js')).closeShared();
  };
  const hookContext = {
    agentId: rec.id,
    agentName: definition.name,
    parentId: rec.parentId,
    cwd: rec.cwd,
    onRun: (r: { hook: string; command: string; exitCode: number | null; durationMs: number; timedOut: boolean }) =>
      audit(layout, {
        event: 'hook_run',
        agent: rec.id,
        hook: r.hook,
        command: r.command,
        exit_code: r.exitCode,
        duration_ms: Math.round(r.durationMs),
        timed_out: r.timedOut,
      }),
    onWarn: (m: string) => log.warn({}, m),
  };

  // The approvals need the session to show questions; the session needs the approvals' gate.
  const emit = (e: SessionEvent): void => ref.session?.emit(e);
  const setWaiting = (waiting: boolean) => {
    try {
      updateRecord(layout, rec.id, { status: waiting ? 'waiting_approval' : 'working' });
    } catch {
      /* ended meanwhile */
    }
  };
  const approvals = new Approvals(layout, rec.id, config.agents.approval_timeout_secs, emit, setWaiting);
  const secrets =
    rec.effectivePolicy.secrets.length > 0
      ? new SecretBroker({
          layout,
          config,
          agentId: rec.id,
          keys: rec.effectivePolicy.secrets,
          ttlSecs: definition.ttlSecs,
          env,
          log,
          emit,
          noApprover: rec.background
            ? 'this is a background agent'
            : rec.mode === 'headless'
              ? 'this agent runs headless'
              : null,
          ancestorLacking: (key) => ancestorLacking(layout, rec, key),
          setWaiting,
          onGrants: (grants) => {
            updateRecord(layout, rec.id, { secretGrants: grants });
          },
          sandboxed: await commandsSandboxed(config, env),
        })
      : undefined;
  const tools: Tool[] = await buildTools({
    layout,
    config,
    record: rec,
    env: childEnv,
    memoryDir: memory.dir,
    inbox,
    log,
    passEnv: definition.passEnv ?? [],
    ...(secrets ? { secrets } : {}),
  });
  const { withheldRules } = await import('../policy/tool-policy.js');
  const policy = {
    tools: rec.effectivePolicy.tools,
    withheld: withheldRules(definition.tools, config.agents.default_disallowed_tools, rec.effectivePolicy.tools),
  };
  // The bash grammar loads on the first shell command, never at start-up (§14).
  let classifier: Promise<ShellClassifier> | undefined;
  const shellClassifier = () =>
    (classifier ??= import('./shell-parser.js').then((m) =>
      m.loadShellClassifier(config.security.deny_commands, childEnv),
    ));
  const gate = createGate({
    layout,
    record: rec,
    policy,
    definition,
    approvals,
    canAsk: !rec.background && rec.mode !== 'headless',
    hookContext,
    log,
    shellClassifier,
    opaqueCommands: config.security.opaque_commands,
    readScope: readScopeCheck(
      agentReadScope({
        layout,
        cwd: rec.cwd,
        memoryDir: memory.dir,
        readDirs: config.permissions.read_dirs,
        env: childEnv,
        hiddenPaths: config.security.hidden_paths,
      }),
      rec.permissionMode,
      rec.cwd,
      childEnv.HOME,
    ),
  });
  const parent = rec.parentId ? readRecordOrNull(layout, rec.parentId, log) : null;
  const root = rec.rootId !== rec.id ? readRecordOrNull(layout, rec.rootId, log) : null;
  const system = buildSystemPrompt({
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
    tools: tools.map((t) => t.name),
    ...(memory.text ? { memory: memory.text } : {}),
  });

  const { fleetBudgetRefusal } = await import('../spawn/budget.js');
  const { runPostToolUse, runLifecycleHooks } = await import('../hooks/run-hooks.js');
  // A child whose harness dies without ending itself is reaped by its parent within ~2 s (§5.7).
  const { superviseChildren } = await import('../lifecycle/supervise.js');
  const stopSupervising = superviseChildren(layout, config, rec.id);
  const ending = await endings({
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
  const session = new AgentSession({
    layout,
    config,
    record: rec,
    model,
    system,
    tools,
    history,
    log,
    transcript,
    inbox,
    gate,
    afterTool: (call, result) =>
      runPostToolUse(
        definition.hooks,
        { name: call.name, input: call.input, output: result.output, isError: !!result.isError },
        hookContext,
      ),
    // Every host's agents of the tree count (§11); a bus that cannot answer leaves this host's count.
    beforeModelCall: async () =>
      (await fleetBudgetRefusal(layout, config, rec.rootId, { unreachable: 'local' }))?.message,
    onApprovalAnswer: (a) => {
      approvals.answer(a);
      secrets?.answer(a);
    },
    // A teammate (§15) stays between tasks even headless: the board is its work.
    oneshot: rec.mode !== 'interactive' && !rec.autoClaim,
    slot: opts.slot,
    ...(onIdle ? { onIdle } : {}),
    ...(rec.autoClaim
      ? {
          board: (await import('./teammate.js')).boardPort(
            layout,
            rec.id,
            rec.board ?? DEFAULT_BOARD,
            log,
            config.inbox.max_body_bytes,
          ),
        }
      : {}),
    ...ending,
  });
  ref.session = session;
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

/**
 * What the session calls as a task or the agent ends: the answer's file, the task's
 * completion (§5.5), and the agent's one ending (harness/finish.ts), which the session shows
 * to the pane, which then lets the process exit (§5.9: no terminal record while its harness lives).
 */
async function endings(ctx: {
  id: string;
  layout: Layout;
  config: Config;
  transcript: TranscriptWriter | null;
  log: Log;
  slot: WorkSlot;
  hookContext: HookContext;
  /** Stops what runs beside the agent (child supervision, secret leases). */
  stop: (reason: string) => void;
}): Promise<Pick<SessionDeps, 'writeOutput' | 'complete' | 'finish'>> {
  const { layout, config, transcript, log, hookContext } = ctx;
  const [
    { writeOutput, writeTaskResult },
    { sendCompletionOnce },
    { updateMeta },
    { runLifecycleHooks },
    { stopHookOnce },
  ] = await Promise.all([
    import('../transcript/output.js'),
    import('../lifecycle/completion.js'),
    import('../transcript/meta.js'),
    import('../hooks/run-hooks.js'),
    import('../hooks/stop-once.js'),
  ]);
  const answerFile = (id: string, task: number, text: string): string | null => {
    try {
      return writeOutput(layout, id, text, config.output.max_bytes, task).path;
    } catch (err) {
      log.error({ err: errorMessage(err) }, 'output write failed');
      return null;
    }
  };
  const meta = (r: AgentRecord) => {
    if (transcript)
      try {
        updateMeta(layout, r.id, {
          status: r.status,
          exit_reason: r.exitReason,
          finished_at: r.finishedAt,
          turns_used: r.turns,
          usage: r.usage,
        });
      } catch {
        /* logged by the writer */
      }
  };
  return {
    writeOutput: (task, text) => answerFile(ctx.id, task, text),
    complete: async (r, result, text) => {
      try {
        writeTaskResult(layout, r.id, result);
      } catch (err) {
        log.error({ err: errorMessage(err) }, 'task result write failed');
      }
      meta(r);
      await sendCompletionOnce(layout, r, result, { text, maxBodyBytes: config.inbox.max_body_bytes });
    },
    finish: async (r, status, reason, open) => {
      ctx.stop(reason);
      const outputPath = open?.text ? answerFile(r.id, r.task, open.text) : null;
      const ended = await finishAgent({
        layout,
        config,
        record: r,
        status,
        reason,
        log,
        openTask: open ? { text: open.text, outputPath } : null,
        closeTranscript: (e) => {
          transcript?.append({ type: 'end', status: e.status, exit_reason: e.exitReason });
          transcript?.close();
          meta(e);
        },
        runStopHooks: async (s, why) => {
          await stopHookOnce(layout, r.id, () =>
            runLifecycleHooks('stop', config.hooks.stop, { ...hookContext, status: s, exitReason: why }),
          );
        },
      });
      ctx.slot.release();
      return ended;
    },
  };
}

/** Whether this agent's shell commands run in the OS sandbox (then siblings cannot read a granted value from them). */
async function commandsSandboxed(config: Config, env: NodeJS.ProcessEnv): Promise<boolean> {
  if (config.security.sandbox === 'none') return false;
  const { effectiveSandbox } = await import('../tools/sandbox-mode.js');
  try {
    return effectiveSandbox(config, env).kind === 'bubblewrap';
  } catch {
    return false;
  }
}
