/**
 * Tool names (§6, §7), as the tools see them. The one map of canonical ids and Claude-style
 * names lives in src/policy/tool-names.ts; these are its names under the tools' vocabulary.
 */
import { CANONICAL_TOOLS, CLAUDE_TOOL_NAMES, canonicalToolName, isKnownTool, type CanonicalTool } from '../policy/tool-names.js';

export const BUILTIN_TOOL_NAMES = CANONICAL_TOOLS;
export type BuiltinToolName = CanonicalTool;
export const CLAUDE_TOOL_ALIASES = CLAUDE_TOOL_NAMES;
export { canonicalToolName };
export const isBuiltinToolName = isKnownTool;
