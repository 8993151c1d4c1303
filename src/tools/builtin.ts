import { createEditTool } from './edit.js';
import type { FileClaim } from './file-claim.js';
import { nodeFileOperations, type FileOperations } from './file-operations.js';
import { createGlobTool } from './glob.js';
import { createGrepTool } from './grep.js';
import { createReadTool } from './read.js';
import { createShellTool, nodeShellOperations, type ShellOperations } from './shell.js';
import type { Tool } from './types.js';
import { createWriteTool } from './write.js';

/**
 * The six built-in workspace tools of one agent (§6), configured from config and the agent's
 * place in the fleet. The fleet tools (send_message, spawn_agent, …) live with the harness.
 */
export interface BuiltinToolsOptions {
  /** The agent's working directory. Each call resolves paths against `ToolContext.cwd`, which the harness sets to this. */
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

export function createBuiltinTools(options: BuiltinToolsOptions): Tool[] {
  const fileOps = options.fileOperations ?? nodeFileOperations;
  const scope = {
    protectedRoots: options.protectedRoots,
    writableWithin: options.writableWithin,
    ...(options.writableRoots ? { writableRoots: options.writableRoots } : {}),
  };
  const tools: Tool[] = [
    createShellTool(
      {
        timeoutSecs: options.shellTimeoutSecs,
        env: options.env,
        ...(options.wrap ? { wrap: options.wrap } : {}),
        ...(options.track ? { track: options.track } : {}),
      },
      options.shellOperations ?? nodeShellOperations,
    ),
    // Leave room for the hint line within the central cap, so read's own hint is never cut.
    createReadTool(
      options.maxOutputBytes ? { maxOutputBytes: Math.max(1000, options.maxOutputBytes - 200) } : {},
      fileOps,
    ),
    createWriteTool({ ...scope, ...(options.claim ? { claim: options.claim } : {}) }, fileOps),
    createEditTool({ ...scope, ...(options.claim ? { claim: options.claim } : {}) }, fileOps),
    createGlobTool({}, fileOps),
    createGrepTool({}, fileOps),
  ];
  return tools;
}
