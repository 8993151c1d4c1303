import type { DefinitionHooks, HookCommand, HookMatcher } from '../hooks/schema.js';
import type { FieldIssue } from './types.js';
import { describe } from './frontmatter.js';

/** `skills` (§7) and `hooks` (§9): the nested fields with shapes of their own. */

type Issues = { errors: FieldIssue[]; warnings: FieldIssue[] };

/** `skills: {include: [globs], exclude: [globs]}`; a plain list means include. */
export function normalizeSkills(v: unknown, issues: Issues): { include: string[]; exclude: string[] } | undefined {
  const empty = { include: [], exclude: [] };
  if (v === undefined || v === null) return empty;
  const strings = (x: unknown): x is string[] => Array.isArray(x) && x.every((s) => typeof s === 'string');
  if (strings(v)) return { include: v, exclude: [] };
  if (typeof v === 'object' && !Array.isArray(v)) {
    const s = v as Record<string, unknown>;
    const include = s.include ?? [];
    const exclude = s.exclude ?? [];
    if (strings(include) && strings(exclude)) return { include, exclude };
  }
  issues.errors.push({
    field: 'skills',
    message: `skills must be {include: [globs], exclude: [globs]}, got ${describe(v)} (skills) — e.g. skills: {include: ['testing/*'], exclude: ['testing/legacy']}`,
  });
  return undefined;
}

const HOOK_EXAMPLE =
  "hooks: {PreToolUse: [{matcher: 'Edit|Write', hooks: [{type: command, command: 'npm run lint'}]}]}";

/**
 * `hooks: {PreToolUse: [{matcher, hooks: [{type: command, command, timeout_secs, fail_closed}]}], PostToolUse: [...]}`
 */
export function normalizeHooks(v: unknown, issues: Issues): DefinitionHooks | undefined {
  const hooks: DefinitionHooks = { PreToolUse: [], PostToolUse: [] };
  if (v === undefined || v === null) return hooks;
  const bad = (field: string, what: string): undefined => {
    issues.errors.push({ field, message: `${what} (${field}) — e.g. ${HOOK_EXAMPLE}` });
    return undefined;
  };
  if (typeof v !== 'object' || Array.isArray(v))
    return bad('hooks', `hooks must be a mapping of PreToolUse / PostToolUse, got ${describe(v)}`);
  for (const [event, entries] of Object.entries(v as Record<string, unknown>)) {
    if (event !== 'PreToolUse' && event !== 'PostToolUse') {
      issues.warnings.push({
        field: `hooks.${event}`,
        message: `hook event '${event}' is not supported and is ignored (hooks) — definitions take PreToolUse and PostToolUse; use config hooks.start / hooks.stop for lifecycle hooks`,
      });
      continue;
    }
    if (!Array.isArray(entries))
      return bad(`hooks.${event}`, `hooks.${event} must be a list of {matcher, hooks}, got ${describe(entries)}`);
    for (const [i, entry] of entries.entries()) {
      const field = `hooks.${event}[${i}]`;
      if (typeof entry !== 'object' || entry === null || Array.isArray(entry))
        return bad(field, `${field} must be {matcher, hooks}, got ${describe(entry)}`);
      const e = entry as Record<string, unknown>;
      const matcher = e.matcher ?? '';
      if (typeof matcher !== 'string')
        return bad(`${field}.matcher`, `${field}.matcher must be text like 'Edit|Write', got ${describe(matcher)}`);
      if (!Array.isArray(e.hooks))
        return bad(`${field}.hooks`, `${field}.hooks must be a list of commands, got ${describe(e.hooks)}`);
      const commands: HookCommand[] = [];
      for (const [j, h] of e.hooks.entries()) {
        const hf = `${field}.hooks[${j}]`;
        const c = (typeof h === 'object' && h !== null ? h : {}) as Record<string, unknown>;
        if ((c.type ?? 'command') !== 'command')
          return bad(`${hf}.type`, `${hf}.type must be 'command', got ${describe(c.type)}`);
        if (typeof c.command !== 'string' || c.command.trim() === '')
          return bad(`${hf}.command`, `${hf}.command must be a shell command, got ${describe(c.command)}`);
        const timeout = c.timeout_secs ?? c.timeout ?? 30;
        if (typeof timeout !== 'number' || !(timeout > 0))
          return bad(
            `${hf}.timeout_secs`,
            `${hf}.timeout_secs must be a number of seconds > 0, got ${describe(timeout)}`,
          );
        const failClosed = c.fail_closed ?? false;
        if (typeof failClosed !== 'boolean')
          return bad(`${hf}.fail_closed`, `${hf}.fail_closed must be true or false, got ${describe(failClosed)}`);
        commands.push({ type: 'command', command: c.command, timeout_secs: timeout, fail_closed: failClosed });
      }
      hooks[event].push({ matcher, hooks: commands } satisfies HookMatcher);
    }
  }
  return hooks;
}
