import { errorMessage } from '../errors.js';
import type { AgentRecord, TaskResult } from '../fleet/record.js';
import type { Injection, LoopEvent, ModelMessage, StopReason } from '../loop/types.js';
import type { ApprovalAnswer } from '../approvals/types.js';
import { keepLoopEvent } from './loop-events.js';
import { RecordKeeper } from './record-keeper.js';
import { BoardWork } from './session-board.js';
import type { SessionDeps } from './session-deps.js';
import { SessionRest } from './session-rest.js';
import type { Session, SessionEvent } from './session-types.js';
import { TurnRecorder } from './turn-recorder.js';

/**
 * One agent's engine: runs tasks through the loop and feeds every event to the transcript,
 * the registry, the audit trail and whoever watches (pane or one-shot). It owns the
 * conversation, the queue of human lines and the unread inbox messages; its ports
 * (session-deps.ts) reach the inbox, the board (session-board.ts) and the running slot
 * (session-rest.ts).
 */

type Done = Extract<LoopEvent, { type: 'done' }>;

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
  private readonly rest: SessionRest;
  private readonly board: BoardWork | undefined;
  private readonly recorder: TurnRecorder;
  private turnAbort: AbortController | null = null;
  private running: Promise<void> | null = null;
  private taskOpen = false;
  /** Its task_start shown: a task opened before the pane listened is shown when its run begins. */
  private taskAnnounced = false;
  private ending: { status: TaskResult['status']; reason: string } | null = null;
  private interrupted = false;
  /** Work ran since the agent last went idle: TeammateIdle is owed once it rests. */
  private worked = false;
  /** Said what it begins with (runTask, idleWithoutTask): before, no mail or board change starts a run over it. */
  private opened = false;
  /** The record's turn count when the open task began: `max_turns` is per task (§6). */
  private taskTurnsStart = 0;
  private finished: Promise<void> | null = null;
  private lastText = '';
  private markEnded: () => void = () => undefined;
  private readonly ended = new Promise<void>((resolve) => {
    this.markEnded = resolve;
  });

  constructor(private readonly deps: SessionDeps) {
    this.id = deps.record.id;
    this.conversation = [...deps.history];
    this.keeper = new RecordKeeper(deps.layout, deps.record, deps.config, (record) =>
      this.emit({ type: 'status', record }),
    );
    this.rest = new SessionRest({
      slot: deps.slot,
      oneshot: deps.oneshot,
      idleTimeoutSecs: deps.config.limits.idle_timeout_secs,
      keeper: this.keeper,
      ending: () => this.ending !== null,
      waiting: (line) =>
        this.emit({
          type: 'notice',
          text: `${line} — waiting in line; the work starts when one is free`,
          level: 'warn',
        }),
      timedOut: () => void this.shutdown('completed', 'idle timeout'),
    });
    this.recorder = new TurnRecorder(deps.transcript, deps.inbox, deps.log, (text) =>
      this.emit({ type: 'notice', text, level: 'warn' }),
    );
    deps.inbox.onArrival((notice) => {
      this.emit({ type: 'notice', text: notice });
      // Idle agents react at once (§4); one-shot agents only between their own steps.
      if (this.opened && !this.running && !this.ending && !deps.oneshot) this.startRun(null);
    });
    this.board =
      deps.board &&
      new BoardWork(
        deps.board,
        deps.log,
        {
          ending: () => this.ending !== null,
          busy: () => this.running !== null || this.humanQueue.length > 0,
          idle: () => this.idle(),
          work: (prompt) => this.startRun(prompt),
          notice: (text, level) => this.emit({ type: 'notice', text, ...(level ? { level } : {}) }),
        },
        () => void this.wake(),
      );
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
    this.opened = true;
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
    if (!this.opened || this.running || this.ending || this.deps.oneshot) return;
    let unread = false;
    try {
      unread = await this.deps.inbox.hasUnread();
    } catch (err) {
      this.deps.log.warn({ err: errorMessage(err) }, 'inbox check failed');
    }
    if (this.running || this.ending) return;
    if (unread) this.startRun(null);
    else if (this.board) await this.board.take();
    else this.idle();
  }

  /** Nothing to do: rest, and once per idle spell after work, the TeammateIdle hooks. */
  private idle(): void {
    this.rest.rest();
    if (this.worked && !this.interrupted) {
      this.worked = false;
      // Once per idle spell, after the task's completion is out: what it sends back arrives as mail.
      void this.deps
        .onIdle?.()
        .catch((err: unknown) => this.deps.log.warn({ err: errorMessage(err) }, 'TeammateIdle hooks failed'));
    }
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
      this.rest.stop();
      this.board?.stop();
      this.turnAbort?.abort(new Error(reason));
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

  /**
   * Start-up is over: the record says `working`, written through this session's own keeper so its later statuses (an
   * `idle` at once, for an agent with no task) are not taken for someone else's.
   */
  started(): void {
    this.keeper.set({ status: 'working' });
    this.keeper.flush();
  }

  /** An interactive agent opened with no task: it gives its slot back until work arrives. */
  idleWithoutTask(): void {
    this.opened = true;
    if (this.running || this.deps.oneshot) return;
    this.rest.idleWithoutTask();
  }

  private startRun(prompt: string | null): void {
    if (this.running) return;
    this.interrupted = false;
    this.worked = true;
    this.running = this.rest
      .takeSlot()
      .then((ok) => (ok ? this.run(prompt) : undefined))
      .catch((err: unknown) => this.fail(err))
      .finally(() => {
        this.running = null;
        // Lines or messages that came in as the run ended start the next one. Mail is looked
        // for in new/ itself, not remembered from events: an arrival during the run's last
        // step has no event left to wake anyone. After Ctrl-C the person speaks first.
        if (!this.ending && !this.deps.oneshot && this.humanQueue.length > 0) this.startRun(null);
        else if (!this.ending && !this.deps.oneshot && !this.interrupted) void this.wake();
        else this.rest.rest();
      });
  }

  /** The terminal record, shown to whoever watches (the pane ends on it). */
  private showEnded(rec: AgentRecord | void): void {
    if (!rec) return;
    this.keeper.current = rec;
    this.emit({ type: 'status', record: rec });
  }

  /** Writes what the record keeper holds; a record that cannot be written now (ENOSPC, corrupt) is the ending's. */
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
    this.rest.working();
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
      this.deps.transcript?.append({ type: 'message', message });
    }
    this.keeper.set({ status: 'working' });
    this.turnAbort = new AbortController();
    this.recorder.begin(this.conversation.length);
    const done = await this.loop(this.turnAbort.signal);
    if (done) await this.afterLoop(done);
  }

  /** Runs the loop over the conversation, feeding each event to whoever listens and to the record; returns its end. */
  private async loop(signal: AbortSignal): Promise<Done | undefined> {
    const { deps } = this;
    const { runLoop } = await import('../loop/run-loop.js');
    let done: Done | undefined;
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
      signal,
      maxRetries: deps.config.models.max_retries,
      gate: deps.gate,
      ...(deps.afterTool ? { afterTool: deps.afterTool } : {}),
      pending: () => this.pending(),
      ...(deps.beforeModelCall ? { beforeModelCall: deps.beforeModelCall } : {}),
    })) {
      this.emit(e);
      if (e.type === 'done') done = e;
      else
        await keepLoopEvent(e, {
          layout: deps.layout,
          agent: this.id,
          keeper: this.keeper,
          recorder: this.recorder,
          inbox: deps.inbox,
          taskTurnsStart: this.taskTurnsStart,
        });
    }
    return done;
  }

  /** The loop ended: record what is left, then the task ends — or stays open after Ctrl-C. */
  private async afterLoop(done: Done): Promise<void> {
    const { deps } = this;
    await this.recorder.recordRest(done.messages);
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
    await this.board?.report(status, text, exitReason);
    if (deps.oneshot) await this.end(result.status, result.exitReason ?? result.status, { fromRun: true });
  }

  private async pending(): Promise<Injection[]> {
    const out: Injection[] = [];
    while (this.humanQueue.length > 0) out.push({ source: 'human', text: this.humanQueue.shift()! });
    const mail = await this.deps.inbox.take();
    if (mail) out.push(mail);
    return out;
  }
}
