import type { CanonicalTool } from '../policy/tool-table.js';
import type { InboxOperations } from './check-inbox.js';
import type { FileClaim } from './file-claim.js';
import type { FileOperations } from './file-operations.js';
import type { FleetOps } from './fleet-ops.js';
import type { LeaseOperations } from './lease-paths.js';
import type { MergeWorkOperations } from './merge-work.js';
import type { SecretRequestOperations } from './request-secret.js';
import type { SendOperations } from './send-message.js';
import type { ShellOperations } from './shell.js';
import type { TaskToolOps } from './task-board.js';
import type { Tool } from './types.js';

/**
 * One tool as the registry lists it (CONTRIBUTING.md, "A tool"; docs/design.md §6): its name
 * (its row in the tool table, policy/tool-table.ts, carries class, vendor names and MCP), the
 * line the pane shows for a call, its line of the system prompt, and how it is made from the
 * operations its caller holds — our harness for its agent, `flotilla mcp` for its client.
 */
export interface ToolSpec {
  readonly name: CanonicalTool;
  /**
   * The compact line the pane shows when a call starts (`merge_work worker-7k2m9q`);
   * undefined when the line needs the result. Without it the pane shows the name and arguments.
   */
  paneLine?(input: PaneInput): string | undefined;
  /**
   * Lines the pane shows when a call finishes; without them (or undefined), nothing for a success and the error in red.
   */
  paneResult?(
    result: { output: string; isError?: boolean; meta?: Record<string, unknown> },
    pane: PaneStyle,
  ): string[] | undefined;
  /** What the system prompt tells an agent that has this tool (lines joined by `\n`), and in which section. */
  prompt?: { section: 'delegation' | 'messages'; text: string };
  /** The tool, or undefined when its caller holds none of the operations it needs. */
  create(ops: ToolOps): Tool | undefined;
}

/** A call's input as the pane reads it: every text already one sanitized line. */
export interface PaneInput {
  /** The field as one line (the first line of a longer text, then ` …`), or `fallback` when it is not text. */
  text(key: string, fallback: string): string;
  /** The field as one line, or undefined when it is not text or is empty. */
  optional(key: string): string | undefined;
  /** The size of a text field (`1.2 KB`), or undefined when it is not text. */
  size(key: string): string | undefined;
  raw: Readonly<Record<string, unknown>>;
}

/** The pane's colours and cutting, handed to a tool's result lines. */
export interface PaneStyle {
  dim(s: string): string;
  red(s: string): string;
  cyan(s: string): string;
  /** Sanitized and cut to the pane's width. */
  fit(s: string): string;
  sanitize(s: string): string;
  /** Sanitized, and only its first line (then ` …`). */
  oneLine(s: string): string;
}

/**
 * The operations a caller holds, each bound to who calls (§6, §13). A tool takes the ones it
 * needs; a caller without them (`flotilla mcp` has no workspace; an agent without secrets has
 * no broker) does not get the tool.
 */
export interface ToolOps {
  workspace?: WorkspaceOptions;
  send?: SendOperations;
  inbox?: InboxOperations;
  fleet?: FleetOps;
  merge?: MergeWorkOperations;
  leases?: LeaseOperations;
  tasks?: TaskToolOps;
  secrets?: SecretRequestOperations;
}

/** The six workspace tools' settings for one agent, from config and its place in the fleet. */
export interface WorkspaceOptions {
  /**
   * The agent's working directory. Each call resolves paths against `ToolContext.cwd`, which the harness sets to this.
   */
  cwd: string;
  /** No file tool writes inside these (the fleet root `.flotilla/`). */
  protectedRoots: readonly string[];
  /** Exceptions inside protectedRoots (the agent's memory dir, §10). */
  writableWithin: readonly string[];
  /** With the sandbox on: the only dirs file tools may write (see WriteScope). */
  writableRoots?: readonly string[];
  /** Default shell timeout (config `tools.shell_timeout_secs`). */
  shellTimeoutSecs: number;
  /** Environment of shell commands: the harness's own. */
  env: NodeJS.ProcessEnv;
  /** The pid namespace or sandbox wrapper (tools/sandbox.ts). */
  wrap?: (argv: string[]) => string[];
  /** Bytes a read shows per call; match config `tools.max_output_bytes` (default 30000). */
  maxOutputBytes?: number;
  /** Told of each shell command's process group (see src/lifecycle/tool-groups.ts). */
  track?: { started(pgid: number): void; ended(pgid: number): void };
  /** Asked before write or edit changes a file: the file lease (docs/design.md §16). */
  claim?: FileClaim;
  /** Back-ends; default the local machine. */
  fileOperations?: FileOperations;
  shellOperations?: ShellOperations;
}

/** The write scope of write and edit, from the workspace settings. */
export function writeScope(w: WorkspaceOptions) {
  return {
    protectedRoots: w.protectedRoots,
    writableWithin: w.writableWithin,
    ...(w.writableRoots ? { writableRoots: w.writableRoots } : {}),
    ...(w.claim ? { claim: w.claim } : {}),
  };
}
