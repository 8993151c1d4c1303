import { createInterface, type Interface } from 'node:readline';
import { errorMessage } from '../errors.js';
import { isTerminal, statusWithReason } from '../fleet/record-status.js';
import type { AgentRecord } from '../fleet/record.js';
import type { ApprovalRequest } from '../approvals/types.js';
import type { ChatActions } from './chat/actions.js';
import { parseChat } from './chat/parse.js';
import { CHAT_ERROR_PREFIX, runChat } from './chat/run.js';
import { colorEnabled, makeStyle, sanitize, type Style } from './pane/ansi.js';
import { APPROVAL_PROMPT, formatApprovalQuestion, formatEvent, SECRET_PROMPT } from './pane/format-event.js';
import { formatBanner, formatStatusLine, type PaneHeader } from './pane/format-status.js';
import { PaneScreen } from './pane/screen.js';
import { InterruptTracker, parseApprovalAnswer } from './repl-input.js';
import type { Session, SessionEvent } from './session-types.js';

export type { PaneHeader };

export interface ReplOptions {
  input: NodeJS.ReadStream;
  output: NodeJS.WriteStream;
  /** What chat commands (`/agent …`, `@name …`, `/send`, `/inbox`) do. */
  chat: ChatActions;
  header: PaneHeader;
  /**
   * One-line notices for the pane that come from outside the session (definitions or config reloaded, or broken); `✗ `
   * lines are errors.
   */
  notices?: { subscribe(fn: (line: string) => void): () => void };
  /** Read for `NO_COLOR`; default `process.env`. */
  env?: NodeJS.ProcessEnv;
}

export const PROMPT = '› ';
export const QUEUED_NOTICE = '(queued: will be given to the agent at the next step)';
export const ABORTED_NOTICE = 'aborted — type to continue, Ctrl-C again to exit';

/**
 * The interactive pane of one agent (§6 "Interactive"): shows the session's events, takes a
 * person's lines (tasks, course corrections, chat commands, approval answers) and Ctrl-C /
 * Ctrl-D. Resolves when the session has shut down.
 */
export function startRepl(session: Session, opts: ReplOptions): Promise<void> {
  return new Promise((resolve) => new Repl(session, opts, resolve).start());
}

class Repl {
  private readonly style: Style;
  private readonly screen: PaneScreen;
  private readonly interrupts = new InterruptTracker();
  private rl: Interface | null = null;
  private facts: AgentRecord;
  /** Approvals waiting for this person, oldest first; the first is the one being asked. */
  private approvals: ApprovalRequest[] = [];
  private lastHumanLine: string | undefined;
  /** Lines are handled one after another, in the order typed, even when a chat action is slow. */
  private lineChain: Promise<void> = Promise.resolve();
  private unsubscribe: () => void = () => {};
  private shuttingDown = false;
  private ended = false;

  constructor(
    private readonly session: Session,
    private readonly opts: ReplOptions,
    private readonly resolve: () => void,
  ) {
    this.style = makeStyle(colorEnabled(opts.output, opts.env ?? process.env));
    this.screen = new PaneScreen(opts.output);
    this.facts = session.record();
  }

  start(): void {
    this.screen.lines(formatBanner(this.opts.header, this.style, this.screen.columns));
    this.screen.setStatus((w) => formatStatusLine(this.opts.header, this.facts, this.style, w));
    const off = this.session.on((e) => this.onEvent(e));
    const offNotices = this.opts.notices?.subscribe((line) =>
      this.print(line.startsWith(CHAT_ERROR_PREFIX) ? this.style.red(line) : this.style.dim(line)),
    );
    this.unsubscribe = () => {
      off();
      offNotices?.();
    };
    this.openReadline();
    if (isTerminal(this.facts.status)) this.finish();
  }

  private openReadline(): void {
    const rl = createInterface({
      input: this.opts.input,
      output: this.opts.output,
      terminal: true,
      prompt: PROMPT,
      historySize: 200,
    });
    this.rl = rl;
    rl.on('line', (line) => this.onLine(line));
    rl.on('SIGINT', () => this.onInterrupt());
    rl.on('close', () => this.onClose());
    // A closed window makes the terminal fail (EIO): the agent ends, it must not crash.
    rl.on('error', () => this.onTerminalGone());
    // A suspended harness would hold its slot and stop answering its inbox, so Ctrl-Z does nothing.
    rl.on('SIGTSTP', () =>
      this.print(this.style.yellow('Ctrl-Z is disabled in an agent pane: Ctrl-C aborts the turn')),
    );
    this.screen.attach(rl);
  }

  private onEvent(e: SessionEvent): void {
    if (this.ended) return;
    if (e.type === 'status') {
      this.facts = e.record;
      this.screen.setStatus((w) => formatStatusLine(this.opts.header, this.facts, this.style, w));
      if (isTerminal(e.record.status)) this.finish();
      return;
    }
    this.screen.push(
      formatEvent(e, { style: this.style, width: this.screen.columns, lastHumanLine: this.lastHumanLine }),
    );
    if (e.type === 'approval') {
      this.approvals.push(e.request);
      if (this.approvals.length === 1) this.ask();
    } else if (e.type === 'approval_resolved') {
      const wasAsked = this.approvals[0]?.id === e.requestId;
      this.approvals = this.approvals.filter((a) => a.id !== e.requestId);
      if (wasAsked) this.ask();
    } else if (e.type === 'task_end') {
      // No approval can still be waiting once its task has ended.
      this.approvals = [];
      this.ask();
    }
  }

  /** Asks the oldest pending approval, or restores the normal prompt when none is left. */
  private ask(): void {
    const req = this.approvals[0];
    if (req === undefined) {
      this.screen.setPrompt(PROMPT);
      return;
    }
    this.screen.push([{ kind: 'line', text: formatApprovalQuestion(req, this.style, this.screen.columns) }]);
    this.screen.setPrompt(this.style.yellow(req.kind === 'secret' ? SECRET_PROMPT : APPROVAL_PROMPT));
  }

  private onLine(line: string): void {
    this.screen.commitInput(line);
    // Decided at Enter: the line typed while a question is shown is its answer.
    const req = this.approvals[0];
    if (req !== undefined) {
      this.answer(req, line);
      return;
    }
    this.lineChain = this.lineChain
      .then(() => this.handleLine(line))
      .catch((err: unknown) => this.print(this.style.red(`✗ ${errorMessage(err)}`)));
  }

  private answer(req: ApprovalRequest, line: string): void {
    const answer = parseApprovalAnswer(line, req.id, req.kind === 'secret' ? 'secret' : 'tool');
    if ('error' in answer) {
      this.print(this.style.yellow(answer.error));
      return;
    }
    this.approvals.shift();
    this.session.answerApproval(answer);
    this.ask();
  }

  private async handleLine(line: string): Promise<void> {
    const text = line.trim();
    if (text === '' || this.ended) return;
    if (text.startsWith('/') || text.startsWith('@')) {
      const defs = await this.opts.chat.definitions().catch(() => []);
      const cmd = parseChat(text, defs);
      if (cmd.type === 'usage') return this.print(this.style.yellow(cmd.message));
      if (cmd.type === 'error') return this.print(this.style.red(CHAT_ERROR_PREFIX + cmd.message));
      if (cmd.type === 'exit') {
        if (this.session.busy())
          return this.print(this.style.yellow('the agent is working: Ctrl-C aborts the turn, Ctrl-C twice exits'));
        return this.shutdown('completed', 'closed by user');
      }
      if (cmd.type !== 'not_chat') {
        const out = await runChat(cmd, this.opts.chat);
        // Replies may carry a model's text (`/agent output`): no escape codes reach the terminal.
        const lines = out === '' ? [] : sanitize(out).split('\n');
        this.screen.lines(lines.map((l) => (l.startsWith(CHAT_ERROR_PREFIX) ? this.style.red(l) : l)));
        return;
      }
    }
    const wasBusy = this.session.busy();
    this.lastHumanLine = text;
    this.session.submitHuman(text);
    if (wasBusy) this.print(this.style.dim(QUEUED_NOTICE));
  }

  private onInterrupt(): void {
    const action = this.interrupts.press(Date.now(), {
      busy: this.session.busy(),
      lineEmpty: (this.rl?.line ?? '') === '',
    });
    if (action === 'abort') {
      this.session.abortTurn();
      this.print(this.style.yellow(ABORTED_NOTICE));
    } else if (action === 'clear_line') {
      // Like a shell: Ctrl-C drops the half-typed line (end of line, then delete to its start).
      this.rl?.write(null, { ctrl: true, name: 'e' });
      this.rl?.write(null, { ctrl: true, name: 'u' });
    } else {
      void this.shutdown('cancelled', 'interrupted by user');
    }
  }

  /** readline closes on Ctrl-D at an empty line: leave when idle, otherwise keep the pane open. */
  private onClose(): void {
    if (this.ended || this.shuttingDown) return;
    this.screen.detach();
    this.rl = null;
    // Ctrl-D is a key readline handles; an ended input stream means the terminal hung up.
    if (this.opts.input.readableEnded) return this.onTerminalGone();
    if (this.session.busy()) {
      this.print(this.style.yellow('Ctrl-D ignored while the agent works: Ctrl-C aborts the turn, Ctrl-C twice exits'));
      this.openReadline();
      return;
    }
    void this.shutdown('completed', 'closed by user');
  }

  private onTerminalGone(): void {
    this.opts.output.on('error', () => undefined);
    void this.shutdown('cancelled', 'window closed');
  }

  private async shutdown(status: 'cancelled' | 'completed', reason: string): Promise<void> {
    if (this.shuttingDown || this.ended) return;
    this.shuttingDown = true;
    this.print(this.style.dim(`ending agent (${status}: ${reason})…`));
    try {
      await this.session.shutdown(status, reason);
    } catch (err) {
      this.print(this.style.red(`✗ shutdown failed: ${errorMessage(err)}`));
    }
    this.finish();
  }

  private finish(): void {
    if (this.ended) return;
    this.ended = true;
    this.unsubscribe();
    this.screen.detach();
    const rl = this.rl;
    this.rl = null;
    rl?.close();
    const status = this.facts.status;
    const id = this.opts.header.id;
    this.screen.lines([
      this.style.dim(`— ${id} ended: ${statusWithReason(status, this.facts.exitReason)}`),
      this.style.dim(`  to continue its conversation: flotilla resume ${id}`),
    ]);
    this.resolve();
  }

  private print(line: string): void {
    this.screen.lines([line]);
  }
}
