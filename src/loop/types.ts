import type { LanguageModelV3 } from '@ai-sdk/provider';
import type { ModelMessage } from 'ai';
import type { Tool, ToolCall, ToolResult } from '../tools/types.js';

/**
 * The agent loop's contract (§6; CONTRIBUTING.md, "How the code reads" 2-3): messages, a model, tools and callbacks in;
 * one
 * union of events out. Every consumer (pane, transcript, registry, audit) reads these events.
 */

export type { ModelMessage };

/** Why a run ended. Model failures are data: they end the run as `failed`, never as a throw. */
export type StopReason = 'completed' | 'max_turns' | 'timeout' | 'aborted' | 'failed' | 'budget';

/** Something put into the conversation from outside the model: inbox messages or a person's line. */
export interface Injection {
  source: 'human' | 'inbox';
  /** The user-turn text, already formatted (inbox messages wrapped as data by the caller). */
  text: string;
  /** Inbox message ids carried by this injection, so the caller can claim them. */
  ids?: string[];
  /** Their Maildir file names (unique, unlike ids a sender may repeat): what the caller claims. */
  files?: string[];
}

export interface Usage {
  inputTokens: number;
  outputTokens: number;
}

export type LoopEvent =
  | { type: 'turn_start'; turn: number }
  | { type: 'text_delta'; text: string }
  | { type: 'tool_call'; call: ToolCall }
  | { type: 'tool_result'; call: ToolCall; result: ToolResult; durationMs: number }
  | { type: 'message_surfaced'; injection: Injection; message: ModelMessage }
  /** Usage of one model call. */
  | { type: 'usage'; inputTokens: number; outputTokens: number }
  /** `messages`: what this turn appended (assistant reply, tool results, surfaced injections). */
  | { type: 'turn_end'; turn: number; messages: ModelMessage[] }
  | {
      type: 'done';
      reason: StopReason;
      /** The final answer: the last non-empty assistant text of this run ('' when there was none). */
      text: string;
      error?: string;
      /** Model calls made by this run. */
      turns: number;
      /** Total usage of this run. */
      usage: Usage;
      /**
       * The whole conversation after this run (input history + everything appended), always
       * well-formed: every tool call has a result. Pass it back as `messages` (plus a new user
       * line) to continue after an abort, a course correction or a follow-up task.
       */
      messages: ModelMessage[];
    };

/** The answer of the policy gate (§7) for one call. */
export type GateDecision = { allow: true } | { allow: false; reason: string };

export interface LoopOptions {
  /** An AI SDK language model (specification v3): a provider model or the scripted model. */
  model: LanguageModelV3;
  system: string;
  /** History (for resume) plus the task as the last user message. Never mutated. */
  messages: ModelMessage[];
  /** The model is shown exactly these tools. */
  tools: Tool[];
  /** Tool output shown to the model, in UTF-8 bytes (config `tools.max_output_bytes`); unset: no cut. */
  maxOutputBytes?: number;
  /** Identity and working directory handed to every tool call. */
  toolContext: { cwd: string; agentId: string };
  /** Model calls allowed in this run (§6, default 20 in config). */
  maxTurns: number;
  /** Wall-clock limit of this run in milliseconds. */
  timeoutMs: number;
  /** Aborting ends the run with reason `aborted`, cancelling the model stream and the running tool. */
  signal?: AbortSignal;
  /** Retries of a model call that failed with a retryable error (HTTP 408/409/429/5xx, network). Default 2. */
  maxRetries?: number;
  /**
   * First retry delay in ms, doubled each retry; a provider's retry-after header wins when shorter than 60 s. Default
   * 2000.
   */
  retryDelayMs?: number;
  /**
   * Policy, approvals and PreToolUse hooks. A denial becomes an error result for the model.
   * `tool` is undefined for a call to a tool the model was not given. `signal` aborts a
   * pending approval when the turn is stopped.
   */
  gate?: (call: ToolCall, tool: Tool | undefined, signal: AbortSignal) => Promise<GateDecision>;
  /** PostToolUse hooks; runs after every executed call. */
  afterTool?: (call: ToolCall, result: ToolResult) => Promise<void>;
  /**
   * Inbox messages and human lines waiting to enter the conversation. Called after every tool
   * call and at every turn boundary; each injection becomes one user message.
   */
  pending?: () => Promise<Injection[]>;
  /** Budget check before every model call: a string stops the run with reason `budget` and that error. */
  beforeModelCall?: () => Promise<string | undefined>;
  /** Sampling options passed to the model. */
  maxOutputTokens?: number;
  temperature?: number;
}
