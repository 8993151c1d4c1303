import type { LoopEvent } from '../loop/types.js';
import type { AgentRecord, TaskResult } from '../fleet/record.js';
import type { ApprovalAnswer, ApprovalEvent } from '../approvals/types.js';

/**
 * The contract between one agent's session (the engine: loop, tools, inbox, transcript,
 * registry) and what shows it to a person (the interactive pane) or to a pipe (one-shot).
 */

export type SessionEvent =
  | LoopEvent
  /** A one-line notice for the pane: a message arrived, a child finished, a warning. */
  | { type: 'notice'; text: string; level?: 'info' | 'warn' | 'error' }
  /** The registry record changed (state, turns, tokens): redraw the status line. */
  | { type: 'status'; record: AgentRecord }
  /** A person must answer an approval, or one was answered. */
  | ApprovalEvent
  | { type: 'task_start'; task: number; prompt: string }
  | { type: 'task_end'; result: TaskResult; text: string };

export interface Session {
  readonly id: string;
  /** The latest registry record. */
  record(): AgentRecord;
  /** Subscribes to events; returns the unsubscribe function. */
  on(listener: (e: SessionEvent) => void): () => void;
  /**
   * A person's line. Idle: it starts a new task. Working: queued and injected as a user turn
   * at the next boundary (course correction). Recorded as `source: human`.
   */
  submitHuman(text: string): void;
  /** True while a task runs. */
  busy(): boolean;
  /** Ctrl-C once: aborts the current turn (model stream and running tool); the agent goes idle. */
  abortTurn(): void;
  /** Answers a pending approval asked in this pane. */
  answerApproval(answer: ApprovalAnswer): void;
  /** Ends the agent (Ctrl-C twice, /exit, SIGTERM, idle timeout) and resolves when it may exit. */
  shutdown(status: 'cancelled' | 'completed' | 'failed', reason: string): Promise<void>;
}
