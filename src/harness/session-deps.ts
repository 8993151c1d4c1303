import type { LanguageModelV3 } from '@ai-sdk/provider';
import type { Log } from '../audit/logger.js';
import type { Config } from '../config/schema.js';
import type { AgentRecord, TaskResult } from '../fleet/record.js';
import type { Layout } from '../layout/layout.js';
import type { GateDecision, Injection, ModelMessage } from '../loop/types.js';
import type { ApprovalAnswer } from '../approvals/types.js';
import type { Tool, ToolCall, ToolResult } from '../tools/types.js';
import type { TranscriptWriter } from '../transcript/writer.js';

/**
 * What one agent's session (harness/session.ts) is given: the model, tools and callbacks that
 * end tasks and the agent, and its ports to the inbox, the board and the running slot — the
 * same ports a vendor CLI's host drives from outside its CLI (harness/cli-host/board-work.ts).
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
  /**
   * The running slot: taken before work runs, given back while idle (§5.2: slots count work). None: always free to run.
   */
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
