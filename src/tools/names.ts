/**
 * Tool names (§6, §7). Canonical ids are what the loop, policy and audit speak; Claude-style
 * names in definitions map onto them, compared case-insensitively after stripping argument
 * suffixes, so `Bash(cargo *)`, `bash` and `shell` all mean `shell`.
 */

export const BUILTIN_TOOL_NAMES = [
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

export type BuiltinToolName = (typeof BUILTIN_TOOL_NAMES)[number];

/**
 * Claude Code tool names → canonical ids. Keys are as Claude spells them. `LS` lists a
 * directory, which `glob` covers; `Task` starts a subagent, which is `spawn_agent` here.
 * Kept equal to src/policy/tool-names.ts so hooks and policy canonicalize alike.
 */
export const CLAUDE_TOOL_ALIASES: Readonly<Record<string, BuiltinToolName>> = Object.freeze({
  Bash: 'shell',
  Read: 'read',
  Write: 'write',
  Edit: 'edit',
  MultiEdit: 'edit',
  Glob: 'glob',
  Grep: 'grep',
  LS: 'glob',
  Task: 'spawn_agent',
});

const aliasByLowerName = new Map<string, string>(Object.entries(CLAUDE_TOOL_ALIASES).map(([k, v]) => [k.toLowerCase(), v]));

/**
 * The canonical id for a tool name as written in a definition or a model's call:
 * trims, drops an argument suffix (`Bash(cargo *)` → `bash`), lowercases, then maps Claude
 * aliases (`bash` → `shell`). Unknown names come back lowercased, so policy can still compare
 * them (e.g. MCP tools).
 */
export function canonicalToolName(name: string): string {
  const paren = name.indexOf('(');
  const bare = (paren === -1 ? name : name.slice(0, paren)).trim().toLowerCase();
  return aliasByLowerName.get(bare) ?? bare;
}

/** True when `name` (after canonicalization) is one of the built-in tool ids. */
export function isBuiltinToolName(name: string): boolean {
  return (BUILTIN_TOOL_NAMES as readonly string[]).includes(canonicalToolName(name));
}
