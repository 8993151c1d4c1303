/**
 * Canonical tool ids and the Claude Code names that map onto them (§6, §7). Policy compares
 * names only after `canonicalToolName`, so `Bash(cargo *)`, `bash`, `BASH` and `shell` are the
 * same tool.
 */

export const CANONICAL_TOOLS = [
  'shell',
  'read',
  'write',
  'edit',
  'glob',
  'grep',
  'send_message',
  'check_inbox',
  'spawn_agent',
  'list_agents',
  'wait_for_agents',
  'cancel_agent',
  'request_secret',
] as const;

export type CanonicalTool = (typeof CANONICAL_TOOLS)[number];

/**
 * Claude Code tool names → canonical ids. `LS` lists a directory, which `glob` covers;
 * `Task` starts a subagent, which is `spawn_agent` here. `NotebookEdit` is deliberately not
 * mapped: granting it as `edit` would widen an allow list from notebook cells to every file.
 */
export const CLAUDE_TOOL_NAMES: Readonly<Record<string, CanonicalTool>> = Object.freeze({
  Bash: 'shell',
  Read: 'read',
  Write: 'write',
  Edit: 'edit',
  MultiEdit: 'edit',
  Glob: 'glob',
  Grep: 'grep',
  LS: 'glob',
  Task: 'spawn_agent',
  Agent: 'spawn_agent',
  SendMessage: 'send_message',
});

/**
 * Gemini CLI's and OpenCode's built-in tool names → ours, so a definition written for them
 * keeps its meaning: an allow list grants what it named, a deny list takes it away. Their
 * web, todo and memory tools have no counterpart here and stay unknown (granted nothing).
 */
export const OTHER_TOOL_NAMES: Readonly<Record<string, CanonicalTool>> = Object.freeze({
  read_file: 'read',
  read_many_files: 'read',
  list_directory: 'glob',
  grep_search: 'grep',
  search_file_content: 'grep',
  run_shell_command: 'shell',
  write_file: 'write',
  replace: 'edit',
  // OpenCode
  bash: 'shell',
  list: 'glob',
  patch: 'edit',
});

const byLowerName = new Map<string, string>(
  [...Object.entries(OTHER_TOOL_NAMES), ...Object.entries(CLAUDE_TOOL_NAMES)].map(([k, v]) => [k.toLowerCase(), v]),
);

/** Strips an argument suffix: `Bash(cargo *)` → `Bash`. */
export function stripToolArguments(name: string): string {
  const paren = name.indexOf('(');
  return (paren === -1 ? name : name.slice(0, paren)).trim();
}

/** True when the name carries an argument pattern (`Bash(cargo *)`), which policy does not enforce. */
export function hasToolArguments(name: string): boolean {
  return /\(.*\)\s*$/.test(name.trim());
}

/**
 * The canonical id of a tool name as written in a definition or a model's call: drop the
 * argument suffix, lowercase, map Claude names. Unknown names come back lowercased so lists
 * can still be compared (e.g. `mcp__github__create_issue`).
 */
export function canonicalToolName(name: string): string {
  const bare = stripToolArguments(name).toLowerCase();
  return byLowerName.get(bare) ?? bare;
}

/** True when the name (after canonicalization) is a tool this harness has. */
export function isKnownTool(name: string): boolean {
  return (CANONICAL_TOOLS as readonly string[]).includes(canonicalToolName(name));
}
