import type { ModelMessage } from 'ai';
import type { PermissionMode } from '../policy/permission-mode.js';

/**
 * Other agent runtimes (§13). A runtime is data (how to launch the vendor CLI, its hook
 * events, its MCP config, the names it gives tools) plus three functions: the definition's
 * policy compiled into the CLI's own permission settings, how a message wakes an idle CLI,
 * and how to read token usage from the CLI's own transcript. No I/O here: the shim
 * (harness/cli-host/) writes the files and runs the process.
 */
export const RUNTIME_NAMES = ['flotilla', 'claude', 'codex', 'gemini'] as const;
export type RuntimeName = (typeof RUNTIME_NAMES)[number];
export type VendorRuntimeName = Exclude<RuntimeName, 'flotilla'>;

export function isRuntimeName(s: string): s is RuntimeName {
  return (RUNTIME_NAMES as readonly string[]).includes(s);
}

/** Flotilla's own events, which each runtime maps its hook events onto. */
/**
 * `permission`: the CLI is about to ask its person about a tool call (Claude Code and Codex
 * `PermissionRequest`); the hook files it in the fleet's approval queue too (docs/runtimes.md, "Approvals").
 */
export type FleetHookEvent = 'session-start' | 'turn-start' | 'turn-end' | 'pre-tool' | 'permission';

/** What a policy compiles to, before a runtime writes it into its settings. */
export interface PolicyInput {
  /** Canonical tool ids the agent may use (effective policy). */
  tools: readonly string[];
  permissionMode: PermissionMode;
}

export interface LaunchInput {
  id: string;
  cwd: string;
  /**
   * Whether the person trusted `cwd` (`flotilla trust`, harness/cli-host/folder-trust.ts). Untrusted,
   * the CLI is never told the folder is trusted and loads none of its project-level settings.
   */
  trusted: boolean;
  /** This agent's own config folder (state/runtimes/<id>/): the CLI's settings live here, never in the user's. */
  configDir: string;
  /** The first task, or '' for an interactive CLI waiting for a person. */
  prompt: string;
  /** The MCP server that gives the CLI the fleet tools: `flotilla mcp`. */
  /** `env`: what the server needs beyond its CLI's environment where the CLI gives its servers a clean one (Codex). */
  mcp: { command: string; args: string[]; env?: Record<string, string> };
  /** The shell command a vendor hook runs for a Flotilla event (it reads the payload on stdin). */
  hookCommand(event: FleetHookEvent): string;
  /** `--model` passed through when the definition or spawn named one. */
  model?: string | undefined;
  env: NodeJS.ProcessEnv;
  /**
   * The person's own login file, used by reference (`runtimes.<name>.login: shared` and no key
   * in env) — or, for a CLI in Flotilla's sandbox, the shim's copy of it kept in step with it
   * (harness/cli-host/login-mirror.ts), in a folder of its own the CLI may write.
   */
  loginFile?: string | undefined;
  /** How often a failed model request is retried (the fleet's `models.max_retries`), where the CLI lets us say. */
  maxRetries: number;
  /**
   * `agents.approval_timeout_secs`: how long the permission hook waits for the fleet's answer (its own timeout is
   * longer).
   */
  approvalTimeoutSecs: number;
  /**
   * The CLI's own session id to continue with its resume command (`flotilla resume`; its session files are already in
   * configDir).
   */
  resume?: string | undefined;
  /**
   * The upgrades the CLI's model catalogue offers (old model → new), when the agent names a model: the CLI is told they
   * were seen.
   */
  modelUpgrades?: Readonly<Record<string, string>> | undefined;
  /** The fleet's copy of the CLI's model catalogue (runtimes/model-catalog.ts), to use instead of its own. */
  modelCatalogFile?: string | undefined;
}

/** One message of a CLI's session, as the AI SDK shapes ours, for `flotilla transcript` and `flotilla resume`. */
export interface SessionTurn {
  /** When the CLI wrote it (ISO 8601), when it says. */
  ts: string | undefined;
  message: ModelMessage;
}

/**
 * A turn the vendor API ended with an error, as the CLI recorded it in its session file.
 * `auth`: the vendor refused the credential (a revoked key, an expired login) — nothing the
 * CLI does next can succeed, so the agent ends `failed`; otherwise only the task does.
 */
export interface TurnFailure {
  reason: string;
  auth: boolean;
}

/**
 * One line of a CLI's session file, as far as the fleet cares: a prompt began a turn, the
 * model answered (one model turn: `id` when the CLI writes one answer over several lines),
 * the API failed the turn, or none of these.
 */
export type SessionLine =
  { kind: 'turn' } | { kind: 'model'; id?: string } | { kind: 'failure'; failure: TurnFailure } | undefined;

export interface Launch {
  argv: string[];
  env: Record<string, string>;
  /** Files to write before start, paths relative to configDir. */
  files: { path: string; content: string }[];
  /** Symbolic links to make before start (path relative to configDir → absolute target): a login used by reference. */
  links?: { path: string; target: string }[];
}

export interface HookReply {
  /** Printed on the hook's stdout. */
  stdout: string;
  /** The hook's exit code (Claude and Gemini read 2 as "blocked"). */
  exitCode: number;
}

export interface Runtime {
  name: VendorRuntimeName;
  /** What a person calls it. */
  title: string;
  /** The npm package the CLI ships in, and the binary it installs. */
  npmPackage: string;
  binary: string;
  /** Environment variable that names the binary's path (overrides PATH lookup). */
  binEnv: string;
  /** The vendor's hook events for Flotilla's (undefined: the CLI has no such hook). */
  hookEvents: Partial<Record<FleetHookEvent, string>>;
  /** How the CLI names Flotilla's MCP tools: prefix + tool name. */
  mcpToolPrefix: string;
  /** The CLI's own tools for Flotilla's canonical ones (shell → Bash …). */
  toolNames: Readonly<Record<string, string>>;
  /** The vendor's own tools with no Flotilla equivalent, denied so they cannot escape the policy. */
  extraTools: readonly string[];
  /**
   * The CLI starts its first turn (the task on its command line) before its MCP servers are
   * connected, and builds the turn's request from the tools in its state. Its `session-start`
   * hook, which the CLI waits for before it takes the task, answers once `flotilla mcp` has
   * listed the fleet tools and the CLI has read them (`mcp-ready`: it answered the server's ping
   * after the list; harness/cli-host/mcp-ready.ts). A resumed session's task is typed into the pane
   * once they are listed instead (cli-host/cli-tend.ts). Unset: the CLI connects its MCP servers
   * before its first turn.
   */
  firstTurnWaitsForMcp?: boolean;
  /**
   * The marks that start the CLI's input line (Claude 2.1 `❯`, Codex 0.169 `›`, Gemini 0.61
   * ` > `, or ` * ` in its yolo mode, whose conversation still marks a person's words ` > `).
   * The shim's typist presses Enter again while the line still holds what it typed
   * (harness/cli-host/typist.ts); a resumed session's task (`firstTurnWaitsForMcp`) is typed as soon
   * as the line shows after the fleet tools are listed, not after a fixed pause (cli-tend.ts).
   */
  inputPrompt?: readonly string[];
  /**
   * How long after the pane shows a paste the CLI may still take Enter as a newline; the shim's
   * Enter waits this long once the pane shows the paste, and undoes a newline that still lands
   * (harness/cli-host/typist.ts). Gemini 0.61 makes Enter a newline for 40 ms after it read an
   * untrusted paste, cleared by a timer and a re-render (later on a loaded machine). Default 0.
   */
  pasteGuardMs?: number;
  /**
   * The wake notice (one line of plain words, `deliver`) is typed as keys, not pasted: Gemini 0.61 guards Enter after
   * a paste by a timer and a re-render, late on a loaded machine, where the first Enter lands as a newline to be undone
   * (~200–400 ms); after typed keys only by the time since the last key (30 ms, its bufferFastReturn), which the shim's
   * wait once the pane shows them (`pasteGuardMs`) outlasts. Anything else is still pasted, and so is the notice
   * while the screen shows `unlessShown`: the CLI takes keys as commands then (Gemini's vim mode, NORMAL).
   */
  typesNotice?: { unlessShown: string };
  /**
   * How to ask the CLI for the model catalogue compiled into it (runtimes/model-catalog.ts
   * runs it): the upgrades it offers, for a CLI that shows a migration dialog for an older
   * model, and the catalogue the fleet gives it instead of its own (`forFleet`).
   */
  modelCatalog?: {
    argv: string[];
    env(configDir: string): Record<string, string>;
    upgrades(stdout: string): Record<string, string> | undefined;
    forFleet(stdout: string): string | undefined;
  };
  /**
   * The screen the CLI stands at in a folder it was told is untrusted (`shows`), the key that
   * opens the folder restricted — its own settings off, its trust unchanged — and the words of
   * a screen that would trust it instead (`unless`: then the key is never pressed).
   */
  restrictedOpen?: { shows: string; unless: string; key: string };
  /**
   * A CLI that asks its person in its own pane only once no permission hook decided (Codex):
   * the hook files the question in the fleet's queue and decides nothing, and the shim answers
   * the prompt with these keys if the queue answers first — `shows` is text only that prompt
   * has on screen, `approve` the key that runs the call once, `deny` the key that refuses it
   * (harness/cli-host/pane-question.ts). Without it the hook waits for the queue itself.
   */
  paneQuestion?: { shows: string; approve: string; deny: string };
  /**
   * The entries of a folder the CLI loads by itself whatever its flags say (Gemini's
   * `.gemini/`: hooks, tool discovery commands, policies): in a folder its person has not
   * trusted, those of the cwd and its parents are hidden from the CLI in the sandbox, and
   * without one the CLI is not started while any exists (harness/cli-host/folder-trust.ts).
   */
  folderSettings?: readonly string[];
  compilePolicy(policy: PolicyInput): unknown;
  launch(input: LaunchInput, policy: PolicyInput): Launch;
  /** Text pasted into the pane to wake an idle CLI for `count` new messages (Enter is sent separately). */
  deliver(count: number): string;
  /** Tokens used so far, from the CLI's own transcript / session file text. */
  parseUsage(text: string): { inputTokens: number; outputTokens: number; turns: number };
  /** What the turn-end hook prints to continue the CLI with `text` as the next input. */
  continueWith(text: string): HookReply;
  /** What the turn-start hook prints to add `text` to the turn's context. */
  addContext(text: string): HookReply;
  /**
   * What the session-start hook prints to add `text` to a new session's context: who the agent is, for a CLI that may
   * build its first request before its fleet MCP server's instructions (which say so too) reach its state
   * (cli-host/hook.ts). Unset: the session-start hook prints nothing.
   */
  sessionContext?(text: string): HookReply;
  /** What the turn-start hook prints to stop the turn before the model is asked (`reason` shown in the pane). */
  stopTurn(reason: string): HookReply;
  /**
   * The text a turn starts with, from a turn-start payload; `''` for a turn the CLI starts by itself (a tool's result,
   * no one's message).
   */
  turnPrompt(payload: Record<string, unknown>): string | undefined;
  /** What the pre-tool hook prints to refuse a call. */
  denyTool(reason: string): HookReply;
  /**
   * What the pre-tool hook prints to refuse a call for a task a limit stopped and end the CLI's
   * turn with it, so the refusal is not sent on to the model; without it the call is refused and
   * the shim's Escape ends the turn.
   */
  denyToolAndStop?(reason: string): HookReply;
  /** What the pre-tool hook prints to have the CLI ask its person about a call (its own prompt, in its pane). */
  askTool(reason: string): HookReply;
  /**
   * What the permission hook prints for the fleet's answer to the CLI's question (runtimes with a `permission` hook
   * event).
   */
  answerPermission(approved: boolean, reason: string): HookReply;
  /** The final answer in a turn-end payload, when the payload carries it. */
  finalAnswer(payload: Record<string, unknown>): string | undefined;
  /**
   * Where the CLI keeps its session files in the agent's own config folder: a folder (searched downwards) and the file
   * name; the newest is the current one.
   */
  sessionFiles: { under: string; name: RegExp };
  /**
   * What a resumed agent copies from its predecessor's config folder for the CLI to find the
   * session (paths relative to it): the session files and what indexes them by relative path —
   * never a database that records the old folder's absolute paths (the CLI would write on there).
   */
  sessionState: readonly string[];
  /**
   * For a CLI that resumes a session while it already runs the first prompt — it reads the
   * session and only then swaps it in for the chat it started with, so a turn that took the chat
   * before has none of the earlier turns (Gemini 0.61 with `--resume` and `-i`): whether what it
   * appended to the resumed session file shows the swap. The first turn-start hook is asked
   * before the turn takes the chat, and answers once it does (cli-host/inherited.ts).
   */
  resumeLoaded?: (appended: string) => boolean;
  /** What one session-file line says about the turn (docs/runtimes.md, "Fail fast"). */
  sessionLine(line: string): SessionLine;
  /** The CLI's own id for the session a session file holds (what its resume command takes). */
  sessionId(file: string, text: string): string | undefined;
  /**
   * The session's prompts, model text, tool calls and results, in order (docs/runtimes.md, "Resume and transcript").
   */
  sessionTurns(text: string): SessionTurn[];
  /** The CLI's transcript path in a hook payload, when it has one. */
  transcriptPath(payload: Record<string, unknown>): string | undefined;
  /** A tool call in a pre-tool payload: canonical name, shell command if any, and the CLI's own input. */
  toolCall(
    payload: Record<string, unknown>,
  ): { tool: string; command?: string; input?: Record<string, unknown> } | undefined;
  /**
   * The call a permission hook's payload asks about, when its shape is not a pre-tool payload's (default: `toolCall`).
   */
  questionCall?(
    payload: Record<string, unknown>,
  ): { tool: string; command?: string; input?: Record<string, unknown> } | undefined;
}
