import { canonicalToolName, CLAUDE_TOOL_NAMES } from '../policy/tool-names.js';

/** Canonical id → every Claude name for it (`edit` → Edit, MultiEdit). */
const claudeNames = new Map<string, string[]>();
for (const [claude, canonical] of Object.entries(CLAUDE_TOOL_NAMES)) {
  claudeNames.set(canonical, [...(claudeNames.get(canonical) ?? []), claude]);
}

/**
 * True when a hook `matcher` applies to a tool (§9): `|`-separated substrings compared
 * case-insensitively against both the canonical id and its Claude names, so a Claude-style
 * `Bash` matches `shell`. An empty or `*` matcher matches every tool.
 */
export function matchesTool(matcher: string | undefined, toolName: string): boolean {
  const parts = (matcher ?? '')
    .split('|')
    .map((p) => p.trim().toLowerCase())
    .filter((p) => p.length > 0);
  if (parts.length === 0 || parts.includes('*')) return true;
  const canonical = canonicalToolName(toolName);
  const names = [toolName, canonical, ...(claudeNames.get(canonical) ?? [])].map((n) => n.toLowerCase());
  return parts.some((p) => names.some((n) => n.includes(p)));
}
