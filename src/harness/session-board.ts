import type { Log } from '../audit/logger.js';
import { errorMessage, FlotillaError } from '../errors.js';
import type { TaskResult } from '../fleet/record.js';
import type { BoardPort } from './session-deps.js';

/** What the board work needs of its session: whether it may start work, and how. */
export interface BoardWorkHost {
  /** The agent is ending: its claim is reopened by the ending (harness/finish.ts), never worked. */
  ending(): boolean;
  /** A run is under way or a person's line waits: a claim is worked after it. */
  busy(): boolean;
  /** Nothing to do: rest (and the TeammateIdle hooks, once per idle spell). */
  idle(): void;
  /** Works a claimed task's prompt as the next run. */
  work(prompt: string): void;
  notice(text: string, level?: 'warn'): void;
}

/**
 * An `auto_claim` agent's work from its board, inside its session (§15): when idle with no
 * mail, claim the next task and work it; when that task ends, write its ending onto the board.
 * The board port is the one a vendor CLI's host drives from outside (harness/cli-host/board-work.ts).
 */
export class BoardWork {
  /** The board task the open task is working, reported when the task ends. */
  private held: string | null = null;
  /** A board task claimed while a run was starting: worked when that run ends. */
  private claimed: { id: string; prompt: string } | null = null;
  private claiming = false;
  private changed = false;
  private readonly stopWatching: () => void;

  constructor(
    private readonly board: BoardPort,
    private readonly log: Log,
    private readonly host: BoardWorkHost,
    onChange: () => void,
  ) {
    this.stopWatching = board.watch(onChange);
  }

  /** The agent ends: the board is watched no more. */
  stop(): void {
    this.stopWatching();
  }

  /**
   * Idle with no mail: claim the next task on the board and work it (§15). One claim at a
   * time; a board change seen meanwhile looks again once this claim is settled.
   */
  async take(): Promise<void> {
    if (this.claiming) {
      this.changed = true;
      return;
    }
    // A completion the TaskCompleted hook refused: the task is still this agent's, and the
    // hook's feedback comes as mail; the next task to end reports it again. No new claim till then.
    if (this.held) return this.host.idle();
    this.claiming = true;
    let work = this.claimed;
    try {
      do {
        this.changed = false;
        if (!work)
          work = await this.board.claim().catch((err: unknown) => {
            this.log.warn({ err: errorMessage(err) }, 'board claim failed');
            return null;
          });
      } while (!work && this.changed && !this.host.ending());
    } finally {
      this.claiming = false;
    }
    // Ending: its claim is reopened by the ending (harness/finish.ts). Busy: worked after this run.
    if (this.host.ending()) return;
    if (!work) return this.host.idle();
    if (this.host.busy()) {
      this.claimed = work;
      return;
    }
    this.claimed = null;
    this.held = work.id;
    this.host.notice(`claimed task ${work.id} from the board`);
    this.host.work(work.prompt);
  }

  /**
   * The board task this task worked gets its result (§15); a refusal (cancelled meanwhile, a hook) is shown, never
   * fatal.
   */
  async report(status: TaskResult['status'], text: string, reason: string | null): Promise<void> {
    const id = this.held;
    if (!id) return;
    this.held = null;
    try {
      await this.board.report(id, status, text, reason);
      this.host.notice(`task ${id} ${status === 'completed' ? 'done' : 'failed'} on the board`);
    } catch (err) {
      if (err instanceof FlotillaError && err.code === 'task-completion-refused') this.held = id;
      this.log.warn({ err: errorMessage(err), task: id }, 'board task not finished');
      this.host.notice(`task ${id} could not be finished on the board: ${errorMessage(err)}`, 'warn');
    }
  }
}
