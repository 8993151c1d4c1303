import { TOOL_TABLE, VENDOR_CLIS, type CanonicalTool, type ToolRow } from './tool-table.js';

/**
 * Canonical tool ids and the other names that map onto them (§6, §7), all from the tool table
 * (tool-table.ts). Policy compares names only after `canonicalToolName`, so `Bash(cargo *)`,
 * `bash`, `BASH`, `run_shell_command` and `shell` are the same tool.
 */

export type { CanonicalTool };

export const CANONICAL_TOOLS: readonly CanonicalTool[] = TOOL_TABLE.map((r) => r.name);

/**
 * Every other name for a tool → its canonical id: each vendor CLI's own names (Claude Code's
 * `Bash`, Gemini CLI's `list_directory`, Codex's `apply_patch`) and the aliases (OpenCode's
 * `bash`, Claude Code's older `MultiEdit`, `LS`), so a definition written for any of them
 * keeps its meaning: an allow list grants what it named, a deny list takes it away. Their
 * web, todo and memory tools have no counterpart here and stay unknown (granted nothing).
 */
export const TOOL_ALIASES: Readonly<Record<string, CanonicalTool>> = aliasMap((r) => [
  ...VENDOR_CLIS.flatMap((cli) => r.vendor[cli]),
  ...r.claudeAliases,
  ...r.otherAliases,
]);

/**
 * Claude Code's names → canonical ids (`Bash` → shell, `MultiEdit` → edit): what a Claude-style hook matcher may say.
 */
export const CLAUDE_TOOL_NAMES: Readonly<Record<string, CanonicalTool>> = aliasMap((r) => [
  ...r.vendor.claude,
  ...r.claudeAliases,
]);

function aliasMap(names: (row: ToolRow) => readonly string[]): Readonly<Record<string, CanonicalTool>> {
  return Object.freeze(
    Object.fromEntries(
      (TOOL_TABLE as readonly ToolRow[]).flatMap((r) =>
        names(r)
          .filter((n) => n !== r.name)
          .map((n) => [n, r.name as CanonicalTool]),
      ),
    ),
  );
}

const byLowerName = new Map<string, string>(Object.entries(TOOL_ALIASES).map(([k, v]) => [k.toLowerCase(), v]));

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
