import {
  CANONICAL_TOOLS,
  TOOL_ALIASES,
  canonicalToolName,
  hasToolArguments,
  isKnownTool,
} from '../policy/tool-names.js';
import type { ToolsSpec } from '../policy/tool-policy.js';
import { describe } from './frontmatter.js';
import type { FieldIssue } from './types.js';

/**
 * The `tools` field (§7): a Claude-style comma string or list (= allow list), or
 * `{allow: [...]}` / `{deny: [...]}` with an optional `except: [...]`, or OpenCode's map of
 * names to true/false. Claude's `disallowedTools` is read too: subtracted from an allow
 * list, else a deny list. Anything else is an error naming the field: a shape read wrong
 * would hand the agent every tool.
 */

const ALIAS_NAMES = Object.keys(TOOL_ALIASES);

const SHAPE = 'a comma-separated string, a list, or {allow: [...]} / {deny: [...]} with optional except';

export function normalizeTools(
  tools: unknown,
  disallowed: unknown,
  issues: { errors: FieldIssue[]; warnings: FieldIssue[] },
): ToolsSpec | undefined {
  const spec: ToolsSpec = { allow: null, deny: [], except: [] };
  let ok = true;
  const list = (v: unknown, field: string): string[] => {
    const names = toNames(v);
    if (!names) {
      issues.errors.push({
        field,
        message: `${field} must be ${SHAPE}, got ${describe(v)} (${field}) — e.g. tools: Read, Grep, Glob`,
      });
      ok = false;
      return [];
    }
    return names;
  };

  if (tools !== undefined && tools !== null) {
    if (typeof tools === 'object' && !Array.isArray(tools)) {
      const t = tools as Record<string, unknown>;
      if (isToggleMap(t)) return toggles(t, disallowed, list, issues);
      if ('allow' in t && 'deny' in t) {
        issues.errors.push({
          field: 'tools',
          message:
            "tools has both 'allow' and 'deny' (tools) — use one: an allow list, or a deny list with optional except, e.g. tools: {deny: [shell], except: [spawn_agent]}",
        });
        return undefined;
      }
      // A key this loader does not know could mean anything, including "deny": fail closed.
      for (const key of Object.keys(t)) {
        if (!['allow', 'deny', 'except'].includes(key)) {
          issues.errors.push({
            field: `tools.${key}`,
            message: `tools.${key} is not understood (tools.${key}) — tools must be ${SHAPE}, or a map of tool names to true/false (OpenCode), e.g. tools: {write: false, bash: false}`,
          });
          ok = false;
        }
      }
      if ('allow' in t) spec.allow = list(t.allow, 'tools.allow');
      if ('deny' in t) spec.deny = list(t.deny, 'tools.deny');
      if ('except' in t) spec.except = list(t.except, 'tools.except');
    } else {
      spec.allow = list(tools, 'tools');
    }
  }
  if (disallowed !== undefined && disallowed !== null) {
    const names = list(disallowed, 'disallowedTools');
    if (spec.allow === null) spec.deny.push(...names);
    else spec.except.push(...names);
  }
  if (!ok) return undefined;

  warnUnknown(spec, issues);
  for (const name of spec.allow ?? []) {
    if (hasToolArguments(name) && isKnownTool(name)) {
      issues.warnings.push({
        field: 'tools',
        message: `'${name}' grants the whole '${canonicalToolName(name)}' tool: argument patterns are not enforced (tools) — forbid commands with security.deny_commands, e.g. deny_commands: ['cargo publish']`,
      });
    }
  }
  return spec;
}

/** OpenCode's shape: `{write: false, bash: false}` — every value a boolean, no allow/deny/except key. */
function isToggleMap(t: Record<string, unknown>): boolean {
  const keys = Object.keys(t);
  return keys.length > 0 && keys.every((k) => !['allow', 'deny', 'except'].includes(k) && typeof t[k] === 'boolean');
}

/**
 * `{name: false}` denies the tool; `{name: true}` changes nothing, since every tool is on by
 * default — unless `'*': false` turns everything off, when the `true` names are the allow
 * list. Other globs (`'mcp_*': false`) deny the tools they match.
 */
function toggles(
  t: Record<string, unknown>,
  disallowed: unknown,
  list: (v: unknown, field: string) => string[],
  issues: { errors: FieldIssue[]; warnings: FieldIssue[] },
): ToolsSpec | undefined {
  const on = Object.keys(t).filter((k) => t[k] === true);
  const off = Object.keys(t).filter((k) => t[k] === false);
  const allOff = off.includes('*');
  const spec: ToolsSpec = { allow: allOff ? on.filter((k) => !k.includes('*')) : null, deny: [], except: [] };
  for (const name of off.filter((k) => k !== '*')) {
    if (!name.includes('*')) spec.deny.push(name);
    else {
      const re = new RegExp(
        `^${name
          .split('*')
          .map((p) => p.replace(/[.+?^${}()|[\]\\]/g, '\\$&'))
          .join('.*')}$`,
        'i',
      );
      spec.deny.push(...[...CANONICAL_TOOLS, ...ALIAS_NAMES].filter((c) => re.test(c)));
    }
  }
  if (disallowed !== undefined && disallowed !== null) {
    const names = list(disallowed, 'disallowedTools');
    if (spec.allow === null) spec.deny.push(...names);
    else spec.except.push(...names);
  }
  warnUnknown(spec, issues);
  return spec;
}

function warnUnknown(spec: ToolsSpec, issues: { warnings: FieldIssue[] }): void {
  for (const name of new Set([...(spec.allow ?? []), ...spec.deny, ...spec.except])) {
    if (!isKnownTool(name)) {
      issues.warnings.push({
        field: 'tools',
        message: `tool '${name}' is not available here and is ignored (tools) — available tools: ${CANONICAL_TOOLS.join(', ')}`,
      });
    }
  }
}

/** A comma string or a list of strings → trimmed names; anything else → undefined. */
function toNames(v: unknown): string[] | undefined {
  if (typeof v === 'string') return splitCommaList(v);
  if (Array.isArray(v) && v.every((x) => typeof x === 'string')) return v.map((x) => x.trim()).filter(Boolean);
  return undefined;
}

/** Splits `Read, Bash(git diff:*, git log:*)` on commas outside parentheses. */
export function splitCommaList(s: string): string[] {
  const out: string[] = [];
  let depth = 0;
  let cur = '';
  for (const c of s) {
    if (c === '(') depth++;
    if (c === ')') depth = Math.max(0, depth - 1);
    if (c === ',' && depth === 0) {
      out.push(cur);
      cur = '';
    } else cur += c;
  }
  out.push(cur);
  return out.map((x) => x.trim()).filter(Boolean);
}
