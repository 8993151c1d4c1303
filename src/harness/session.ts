import type { LanguageModelV3 } from '@ai-sdk/provider';
import { audit } from '../audit/audit.js';
import type { Log } from '../audit/logger.js';
import type { Config } from '../config/schema.js';
import { errorMessage, FlotillaError } from '../errors.js';
import { toLastLine } from '../fleet/record-status.js';
import type { AgentRecord, TaskResult } from '../fleet/record.js';
import type { Layout } from '../layout/layout.js';
import type { GateDecision, Injection, LoopEvent, ModelMessage, StopReason } from '../loop/types.js';
import type { ApprovalAnswer } from '../approvals/types.js';
import type { Tool, ToolCall, ToolResult } from '../tools/types.js';
import type { TranscriptWriter } from '../transcript/writer.js';
import { RecordKeeper } from './record-keeper.js';
import type { Session, SessionEvent } from './session-types.js';

/**
 * One agent's engine: runs tasks through the loop and feeds every event to the transcript,
 * the registry, the audit trail and whoever watches (pane or one-shot). It owns the
 * conversation, the queue of human lines and the unread inbox messages.
 */

export interface InboxPort {
  /** Unread messages in surfacing order (urgent first, then by time), as one injection, or undefined. */
  take(): Promise<Injection | undefined>;
  /** Claims the messages (by Maildir file name) once the transcript has recorded them (§4). */
  claim(files: string[]): Promise<void>;
  /** Re-reads new/: true when mail not yet shown to the model is waiting. */
  hasUnread(): Promise<boolean>;
  /** Claims what check_inbox handed to the model, once the transcript holds the tool result. */
  claimPending(): Promise<void>;
  /** Called when a new message arrives. */
  onArrival(listener: (notice: string) => void): void;
  close(): Promise<void>;
}

export interface SessionDeps {
  layout: Layout;
  config: Config;
  record: AgentRecord;
  model: LanguageModelV3;
  system: string;
  tools: Tool[];
  /** Conversation so far (resume); the first task's prompt is appended to it. */
  history: ModelMessage[];
  log: Log;
  transcript: TranscriptWriter | null;
  inbox: InboxPort;
  gate: (call: ToolCall, tool: Tool | undefined, signal: AbortSignal) => Promise<GateDecision>;
  afterTool?: (call: ToolCall, result: ToolResult) => Promise<void>;
  /** Budget check before every model call (§11). */
  beforeModelCall?: () => Promise<string | undefined>;
  /** Pending approvals answered in the pane land here (wired by the gate). */
  onApprovalAnswer?: (answer: ApprovalAnswer) => void;
  /** Ends the agent's life: completion, stop hooks, children, slot. */
  finish: (
    rec: AgentRecord,
    status: TaskResult['status'],
    reason: string,
    openTask: { text: string } | null,
  ) => Promise<AgentRecord | void>;
  /** Writes task `task`'s final answer; returns its path. */
  writeOutput: (task: number, text: string) => string | null;
  /** Sends the task's completion (exactly once per task). */
  complete: (rec: AgentRecord, result: TaskResult, text: string) => Promise<void>;
  /** One-shot agents end after their first task. */
  oneshot: boolean;
  /** A persistent agent went idle after work (no mail left): the TeammateIdle hooks (docs/hooks.md "Team hooks"). */
  onIdle?: () => Promise<void>;
  /** The running slot: taken before work runs, given back while idle (§5.2: slots count work). None: always free to run. */
  slot?: WorkSlotPort;
  /** `auto_claim` (§15): when idle with no mail, claim the next task on this board and work it. */
  board?: BoardPort;
}

/** An `auto_claim` agent's board (§15, harness/teammate.ts): where it takes work when idle. */
export interface BoardPort {
  /** Claims the next claimable task: its id and the prompt to work it, or null when none is. */
  claim(): Promise<{ id: string; prompt: string } | null>;
  /** Writes how the task's run ended onto it: done with the answer, or failed. */
  report(id: string, status: TaskResult['status'], text: string, reason: string | null): Promise<void>;
  /** Calls `onChange` when the board may have work; returns the stop. */
  watch(onChange: () => void): () => void;
}

export interface WorkSlotPort {
  readonly index: number;
  held(): boolean;
  take(signal: AbortSignal, onWait: (line: string) => void): Promise<boolean>;
  give(): void;
}

const STOP_STATUS: Record<StopReason, TaskResult['status']> = {
  completed: 'completed',
  max_turns: 'failed',
  timeout: 'timed_out',
  aborted: 'cancelled',
  failed: 'failed',
  budget: 'failed',
};

export class AgentSession implements Session {
  readonly id: string;
  private readonly listeners = new Set<(e: SessionEvent) => void>();
  private readonly humanQueue: string[] = [];
  private conversation: ModelMessage[];
  private readonly keeper: RecordKeeper;
  private turnAbort: AbortController | null = null;
  private slotWait: AbortController | null = null;
  private running: Promise<void> | null = null;
  private taskOpen = false;
  /** Its task_start shown: a task opened before the pane listened is shown when its run begins. */
  private taskAnnounced = false;
  private ending: { status: TaskResult['status']; reason: string } | null = null;
  private interrupted = false;
  /** Work ran since the agent last went idle: TeammateIdle is owed once it rests. */
  private worked = false;
  /** The record's turn count when the open task began: `max_turns` is per task (§6). */
  private taskTurnsStart = 0;
  private transcriptBroken = false;
  private finished: Promise<void> | null = null;
  private lastText = '';
  private idleTimer: NodeJS.Timeout | undefined;
  private markEnded: () => void = () => undefined;
  private readonly ended = new Promise<void>((resolve) => {
    this.markEnded = resolve;
  });
  /** The board task the open task is working (§15), reported when the task ends. */
  private boardTask: string | null = null;
  /** A board task claimed while a run was starting: worked when that run ends. */
  private claimedWork: { id: string; prompt: string } | null = null;
  private claiming = false;
  private boardChanged = false;
  private stopWatching: () => void = () => undefined;

  constructor(private readonly deps: SessionDeps) {
    this.id = deps.record.id;
    this.conversation = [...deps.history];
    this.keeper = new RecordKeeper(deps.layout, deps.record, deps.config, (record) =>
      this.emit({ type: 'status', record }),
    );
    deps.inbox.onArrival((notice) => {
      this.emit({ type: 'notice', text: notice });
      // Idle agents react at once (§4); one-shot agents only between their own steps.
      if (!this.running && !this.ending && !deps.oneshot) this.startRun(null);
    });
    if (deps.board) this.stopWatching = deps.board.watch(() => void this.wake());
  }

  record(): AgentRecord {
    return this.keeper.current;
  }

  on(listener: (e: SessionEvent) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  busy(): boolean {
    return this.running !== null;
  }

  /** Starts the first task (the spawn prompt) and returns when it ends. */
  async runTask(prompt: string): Promise<void> {
    this.startRun(prompt);
    await this.running;
  }

  submitHuman(text: string): void {
    if (!text.trim() || this.ending) return;
    this.humanQueue.push(text);
    if (!this.running) this.startRun(null);
  }

  abortTurn(): void {
    this.turnAbort?.abort(new Error('interrupted by the user'));
  }

  answerApproval(answer: ApprovalAnswer): void {
    this.deps.onApprovalAnswer?.(answer);
  }

  /**
   * Starts a run if unread mail waits and the agent is idle: the state check behind every
   * surfacing (start, run end, a resumed agent's adopted mail). Events only make it sooner.
   */
  async wake(): Promise<void> {
    if (this.running || this.ending || this.deps.oneshot) return;
    let unread = false;
    try {
      unread = await this.deps.inbox.hasUnread();
    } catch (err) {
      this.deps.log.warn({ err: errorMessage(err) }, 'inbox check failed');
    }
    if (this.running || this.ending) return;
    if (unread) this.startRun(null);
    else if (this.deps.board) await this.takeBoardWork();
    else this.idle();
  }

  /** Nothing to do: rest, and once per idle spell after work, the TeammateIdle hooks. */
  private idle(): void {
    this.rest();
    if (this.worked && !this.interrupted) {
      this.worked = false;
      // Once per idle spell, after the task's completion is out: what it sends back arrives as mail.
      void this.deps
        .onIdle?.()
        .catch((err: unknown) => this.deps.log.warn({ err: errorMessage(err) }, 'TeammateIdle hooks failed'));
    }
  }

  /**
   * Idle with no mail: a teammate claims the next task on its board and works it (§15). One
   * claim at a time; a board change seen meanwhile looks again once this claim is settled.
   */
  private async takeBoardWork(): Promise<void> {
    if (this.claiming) {
      this.boardChanged = true;
      return;
    }
    // A completion the TaskCompleted hook refused: the task is still this agent's, and the
    // hook's feedback comes as mail; the next task to end reports it again. No new claim till then.
    if (this.boardTask) return this.idle();
    this.claiming = true;
    let work = this.claimedWork;
    try {
      do {
        this.boardChanged = false;
        if (!work)
          work = await this.deps.board!.claim().catch((err: unknown) => {
            this.deps.log.warn({ err: errorMessage(err) }, 'board claim failed');
            return null;
          });
      } while (!work && this.boardChanged && !this.ending);
    } finally {
      this.claiming = false;
    }
    // Ending: its claim is reopened by the ending (harness/finish.ts). Busy: worked after this run.
    if (this.ending) return;
    if (!work) return this.idle();
    if (this.running || this.humanQueue.length > 0) {
      this.claimedWork = work;
      return;
    }
    this.claimedWork = null;
    this.boardTask = work.id;
    this.emit({ type: 'notice', text: `claimed task ${work.id} from the board` });
    this.startRun(work.prompt);
  }

  shutdown(status: 'cancelled' | 'completed' | 'failed', reason: string): Promise<void> {
    return this.end(status, reason, { fromRun: false });
  }

  /**
   * The one way an agent ends (a signal, the pane, an idle timeout, a oneshot task's end):
   * stop the run, then finish once — terminal record, open task's completion, stop hooks.
   * `fromRun`: called by the run itself as its task ends, so there is no run to wait for.
   */
  private end(status: TaskResult['status'], reason: string, opts: { fromRun: boolean }): Promise<void> {
    this.finished ??= (async () => {
      this.ending = { status, reason };
      clearTimeout(this.idleTimer);
      this.stopWatching();
      this.turnAbort?.abort(new Error(reason));
      this.slotWait?.abort();
      if (!opts.fromRun) await this.running?.catch(() => undefined);
      const open = this.taskOpen ? { text: this.lastText } : null;
      this.flushQuietly();
      try {
        this.showEnded(await this.deps.finish(this.keeper.current, status, reason, open));
      } finally {
        await this.deps.inbox.close();
      }
    })().finally(() => this.markEnded());
    return this.finished;
  }

  /** Settles when the agent has ended for good. */
  whenFinished(): Promise<void> {
    return this.ended;
  }

  emit(e: SessionEvent): void {
    for (const l of this.listeners) {
      try {
        l(e);
      } catch (err) {
        this.deps.log.error({ err: errorMessage(err) }, 'session listener failed');
      }
    }
  }

  /** Start-up is over: the record says `working`, written through this session's own keeper so its later statuses (an `idle` at once, for an agent with no task) are not taken for someone else's. */
  started(): void {
    this.keeper.set({ status: 'working' });
    this.keeper.flush();
  }

  /** An interactive agent opened with no task: it gives its slot back until work arrives. */
  idleWithoutTask(): void {
    if (this.running || this.deps.oneshot) return;
    this.deps.slot?.give();
    this.keeper.set({ status: 'idle', slot: null });
  }

  private startRun(prompt: string | null): void {
    if (this.running) return;
    this.interrupted = false;
    this.worked = true;
    this.running = this.takeSlot()
      .then((ok) => (ok ? this.run(prompt) : undefined))
      .catch((err: unknown) => this.fail(err))
      .finally(() => {
        this.running = null;
        // Lines or messages that came in as the run ended start the next one. Mail is looked
        // for in new/ itself, not remembered from events: an arrival during the run's last
        // step has no event left to wake anyone. After Ctrl-C the person speaks first.
        if (!this.ending && !this.deps.oneshot && this.humanQueue.length > 0) this.startRun(null);
        else if (!this.ending && !this.deps.oneshot && !this.interrupted) void this.wake();
        else this.rest();
      });
  }

  /** No work: the slot goes back (§5.2) and the idle timer runs. */
  private rest(): void {
    if (!this.deps.oneshot && this.deps.slot?.held()) {
      this.deps.slot.give();
      if (!this.ending) this.keeper.set({ slot: null });
    }
    this.armIdleTimer();
  }

  /** Work arrived: take a running slot first, in line when none is free. False when the agent ends meanwhile. */
  private async takeSlot(): Promise<boolean> {
    const slot = this.deps.slot;
    if (!slot || slot.held()) return true;
    clearTimeout(this.idleTimer);
    this.slotWait = new AbortController();
    try {
      const ok = await slot.take(this.slotWait.signal, (line) => {
        this.keeper.set({ status: 'queued', lastLine: line });
        this.emit({
          type: 'notice',
          text: `${line} — waiting in line; the work starts when one is free`,
          level: 'warn',
        });
      });
      if (ok) this.keeper.set({ slot: slot.index });
      return ok && !this.ending;
    } finally {
      this.slotWait = null;
    }
  }

  /** The terminal record, shown to whoever watches (the pane ends on it). */
  private showEnded(rec: AgentRecord | void): void {
    if (!rec) return;
    this.keeper.current = rec;
    this.emit({ type: 'status', record: rec });
  }

  /** Writes what the record keeper holds; a record that cannot be written now (ENOSPC, corrupt) is the ending's to settle. */
  private flushQuietly(): void {
    try {
      this.keeper.flush();
    } catch (err) {
      this.deps.log.warn({ err: errorMessage(err) }, 'record not written before the ending');
    }
  }

  /** An error the run could not turn into data (a disk full, a corrupt record): the agent ends `failed`, saying why. */
  private fail(err: unknown): void {
    const cause = errorMessage(err);
    this.deps.log.error({ err: cause }, 'agent failed');
    this.emit({ type: 'notice', text: `agent failed: ${cause}`, level: 'error' });
    void this.shutdown('failed', cause).catch((e: unknown) =>
      this.deps.log.error({ err: errorMessage(e) }, 'ending after a failure failed'),
    );
  }

  private armIdleTimer(): void {
    clearTimeout(this.idleTimer);
    const secs = this.deps.config.limits.idle_timeout_secs;
    if (secs > 0 && !this.ending && !this.deps.oneshot) {
      this.idleTimer = setTimeout(() => void this.shutdown('completed', 'idle timeout'), secs * 1000);
      this.idleTimer.unref();
    }
  }

  /**
   * The task is open from the moment the agent holds it, not from its first model call: an
   * agent cancelled before its run began still owes its parent that task's one completion.
   */
  openTask(): void {
    if (this.taskOpen) return;
    this.taskOpen = true;
    this.taskAnnounced = false;
    this.keeper.beginTask();
    this.taskTurnsStart = this.keeper.current.turns;
    this.keeper.set({ taskTurns: 0 });
  }

  private async run(prompt: string | null): Promise<void> {
    clearTimeout(this.idleTimer);
    const { deps } = this;
    this.openTask();
    if (!this.taskAnnounced) {
      this.taskAnnounced = true;
      this.emit({
        type: 'task_start',
        task: this.keeper.current.task,
        prompt: prompt ?? this.humanQueue[0] ?? '(inbox)',
      });
    }
    if (prompt !== null) {
      const message: ModelMessage = { role: 'user', content: prompt };
      this.conversation.push(message);
      deps.transcript?.append({ type: 'message', message });
    }
    this.keeper.set({ status: 'working' });
    this.turnAbort = new AbortController();
    const surfaced = new Map<ModelMessage, Injection>();
    let recorded = this.conversation.length;
    const record = async (messages: ModelMessage[]) => {
      for (const m of messages) {
        const inj = surfaced.get(m);
        if (!inj) deps.transcript?.append({ type: 'message', message: m });
        else if (inj.source === 'human') deps.transcript?.append({ type: 'surfaced', source: 'human', text: inj.text });
        else {
          const kept = deps.transcript
            ? deps.transcript.append({
                type: 'surfaced',
                source: 'inbox',
                ids: inj.ids ?? [],
                files: inj.files ?? [],
                text: inj.text,
              })
            : true;
          // Claimed only now that the transcript holds it: a crash before this re-delivers.
          if (kept) {
            this.transcriptBroken = false;
            await deps.inbox.claim(inj.files ?? []);
          } else this.transcriptFailed();
        }
      }
      recorded += messages.length;
    };

    const { runLoop } = await import('../loop/run-loop.js');
    let done: Extract<LoopEvent, { type: 'done' }> | undefined;
    const rec = this.keeper.current;
    for await (const e of runLoop({
      model: deps.model,
      system: deps.system,
      messages: this.conversation,
      tools: deps.tools,
      maxOutputBytes: deps.config.tools.max_output_bytes,
      toolContext: { cwd: rec.cwd, agentId: rec.id },
      maxTurns: Math.max(1, rec.maxTurns - (rec.turns - this.taskTurnsStart)),
      timeoutMs: rec.timeoutSecs * 1000,
      signal: this.turnAbort.signal,
      maxRetries: deps.config.models.max_retries,
      gate: deps.gate,
      ...(deps.afterTool ? { afterTool: deps.afterTool } : {}),
      pending: () => this.pending(),
      ...(deps.beforeModelCall ? { beforeModelCall: deps.beforeModelCall } : {}),
    })) {
      this.emit(e);
      switch (e.type) {
        case 'turn_start':
          this.keeper.set({
            turns: this.keeper.current.turns + 1,
            taskTurns: this.keeper.current.turns + 1 - this.taskTurnsStart,
          });
          break;
        case 'tool_call':
          this.onToolCall(e.call);
          break;
        case 'tool_result':
          audit(deps.layout, {
            event: 'tool_result',
            agent: this.id,
            tool: e.call.name,
            is_error: !!e.result.isError,
            duration_ms: Math.round(e.durationMs),
            ...(e.result.meta ?? {}),
          });
          break;
        case 'message_surfaced':
          surfaced.set(e.message, e.injection);
          if (e.injection.source === 'human')
            audit(deps.layout, {
              event: 'human_input',
              agent: this.id,
              source: 'human',
              chars: e.injection.text.length,
            });
          break;
        case 'usage':
          this.keeper.addUsage(e.inputTokens, e.outputTokens);
          break;
        case 'turn_end': {
          await record(e.messages);
          await deps.inbox.claimPending();
          const text = lastAssistantText(e.messages);
          if (text) this.keeper.set({ lastLine: toLastLine(text) });
          // The turn boundary: one record write for the whole turn.
          this.keeper.flush();
          break;
        }
        case 'done':
          done = e;
          break;
      }
    }
    if (!done) return;
    await record(done.messages.slice(recorded));
    await deps.inbox.claimPending();
    this.conversation = done.messages;
    if (done.text) this.lastText = done.text;
    this.turnAbort = null;

    const interrupted = done.reason === 'aborted' && !this.ending;
    if (interrupted) {
      this.interrupted = true;
      // Ctrl-C once: the task stays open; the person types how to go on.
      this.keeper.set({ status: 'idle', lastLine: 'interrupted — waiting for input' });
      return;
    }
    if (done.reason === 'aborted') return; // shutdown() ends the task itself
    // Limits end with their name as the reason (`budget`, `max_turns`, `timeout`); failures with the error.
    const exitReason =
      done.reason === 'completed' ? null : done.reason === 'failed' ? (done.error ?? 'failed') : done.reason;
    if (done.error && done.reason !== 'failed') deps.log.warn({ reason: done.reason }, done.error);
    await this.endTask(STOP_STATUS[done.reason], exitReason, done.text);
  }

  private async endTask(status: TaskResult['status'], exitReason: string | null, text: string): Promise<void> {
    const { deps } = this;
    this.taskOpen = false;
    const task = this.keeper.current.task;
    const outputPath = deps.writeOutput(task, text);
    const result: TaskResult = { task, status, exitReason, finishedAt: new Date().toISOString(), outputPath };
    const change = { lastTask: result, ...(deps.oneshot ? {} : { status: 'idle' as const }) };
    // The completion is delivered before the record says the task is done: a parent whose
    // wait_for_agents returns on the record then finds it already in its inbox, instead of
    // ending its own task first and answering the late completion a second time.
    try {
      await deps.complete({ ...this.keeper.current, ...change }, result, text);
    } finally {
      // Also when the completion could not go out (a full disk): the record then says the task
      // ended, and the ending sends the completion it still owes (once).
      this.keeper.set(change);
    }
    this.emit({ type: 'task_end', result, text });
    await this.reportBoardTask(status, text, exitReason);
    if (deps.oneshot) await this.end(result.status, result.exitReason ?? result.status, { fromRun: true });
  }

  /** The board task this task worked gets its result (§15); a refusal (cancelled meanwhile, a hook) is shown, never fatal. */
  private async reportBoardTask(status: TaskResult['status'], text: string, reason: string | null): Promise<void> {
    const id = this.boardTask;
    if (!id || !this.deps.board) return;
    this.boardTask = null;
    try {
      await this.deps.board.report(id, status, text, reason);
      this.emit({ type: 'notice', text: `task ${id} ${status === 'completed' ? 'done' : 'failed'} on the board` });
    } catch (err) {
      if (err instanceof FlotillaError && err.code === 'task-completion-refused') this.boardTask = id;
      this.deps.log.warn({ err: errorMessage(err), task: id }, 'board task not finished');
      this.emit({
        type: 'notice',
        text: `task ${id} could not be finished on the board: ${errorMessage(err)}`,
        level: 'warn',
      });
    }
  }

  /** Transcript writes fail (disk full): the agent goes on, but claims nothing it could not record, and says so once. */
  private transcriptFailed(): void {
    if (this.transcriptBroken) return;
    this.transcriptBroken = true;
    const text =
      'transcript cannot be written (disk full?): mail shown to the model stays unread in new/ until the transcript records again';
    this.deps.log.warn({}, text);
    this.emit({ type: 'notice', text, level: 'warn' });
  }

  private onToolCall(call: ToolCall): void {
    const input = (call.input ?? {}) as Record<string, unknown>;
    const what =
      typeof input.command === 'string'
        ? `$ ${input.command}`
        : typeof input.path === 'string'
          ? `${call.name} ${input.path}`
          : call.name;
    // The audit's tool_call line is the gate's: written once the call is decided (harness/gate.ts).
    this.keeper.set({ lastLine: toLastLine(what) });
  }

  private async pending(): Promise<Injection[]> {
    const out: Injection[] = [];
    while (this.humanQueue.length > 0) out.push({ source: 'human', text: this.humanQueue.shift()! });
    const mail = await this.deps.inbox.take();
    if (mail) out.push(mail);
    return out;
  }
}

function lastAssistantText(messages: ModelMessage[]): string {
  for (let i = messages.length - 1; i >= 0; i--) {
    const m = messages[i]!;
    if (m.role !== 'assistant') continue;
    if (typeof m.content === 'string') return m.content;
    const text = m.content
      .filter((p) => p.type === 'text')
      .map((p) => (p as { text: string }).text)
      .join('');
    if (text.trim()) return text;
  }
  return '';
}
