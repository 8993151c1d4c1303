/**
 * Tool names (§6, §7), as the tools see them. The one table of tools is
 * src/policy/tool-table.ts; these are its names under the tools' vocabulary.
 */
import { CANONICAL_TOOLS, CLAUDE_TOOL_NAMES, TOOL_ALIASES, canonicalToolName, isKnownTool, type CanonicalTool } from '../policy/tool-names.js';

export const BUILTIN_TOOL_NAMES = CANONICAL_TOOLS;
export type BuiltinToolName = CanonicalTool;
export { TOOL_ALIASES };
export const CLAUDE_TOOL_ALIASES = CLAUDE_TOOL_NAMES;
export { canonicalToolName };
export const isBuiltinToolName = isKnownTool;
