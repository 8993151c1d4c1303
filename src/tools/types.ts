import type { z } from 'zod';
import type { ToolClass } from '../policy/permission-mode.js';

/**
 * The contract between tools and the loop (§6; CONTRIBUTING.md, "A tool"). A tool is a zod schema plus an
 * `execute` whose file-system or process operations were injected by its factory.
 */

// Policy decides by a tool's class, so the class is policy's word; tools name theirs with it.
export type { ToolClass };

export interface ToolContext {
  /** Aborted when the turn is cancelled (Ctrl-C, SIGTERM, timeout): stop work, kill processes. */
  signal: AbortSignal;
  /** The agent's working directory; relative paths resolve against it. */
  cwd: string;
  /** The calling agent's id. */
  agentId: string;
  /** Extra environment for this one call's processes (granted secrets, §11); never shown to the model. */
  extraEnv?: Readonly<Record<string, string>>;
}

export interface ToolResult {
  /** Text given to the model (before central truncation and scrubbing). */
  output: string;
  /** True when the call failed; the text then says what was received and how to fix it. */
  isError?: boolean;
  /** Facts for the audit trail (exit code, path, …); never shown to the model. */
  meta?: Record<string, unknown>;
}

export interface Tool<I = unknown> {
  /** Canonical id: shell, read, write, edit, glob, grep, send_message, … */
  name: string;
  description: string;
  inputSchema: z.ZodType<I>;
  klass: ToolClass;
  /** Told to the model when this tool's output was truncated: how to see the cut part. */
  outputHint?: string;
  /** A valid input, shown in the error for an invalid call so the model can copy its shape. */
  inputExample?: I;
  /**
   * The output is the harness's own framing with every untrusted part already escaped
   * (check_inbox's `<inbox-message>` blocks): runTool leaves its markers alone so the model
   * sees real framing. An error result is still scrubbed.
   */
  framedOutput?: boolean;
  execute(input: I, ctx: ToolContext): Promise<ToolResult>;
}

/** A tool call as the loop sees it. */
export interface ToolCall {
  id: string;
  name: string;
  input: unknown;
}
