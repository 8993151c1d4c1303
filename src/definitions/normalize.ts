import { ID_PATTERN } from '../fleet/ids.js';
import { describe } from './frontmatter.js';
import { normalizeHooks, normalizeSkills } from './normalize-extras.js';
import { normalizePermissions } from './normalize-permissions.js';
import { normalizeSchedule } from './normalize-schedule.js';
import { normalizeTools } from './normalize-tools.js';
import { isRuntimeName, RUNTIME_NAMES } from '../runtimes/types.js';
import { BOARD_PATTERN } from '../tasks/task.js';
import type { Definition, DefinitionConfig, DefinitionScope, FieldIssue, MemoryScope } from './types.js';

/**
 * Turns parsed frontmatter into a `Definition` (§7): validates every field, applies defaults
 * from config, collects errors (the file is not loaded) and warnings (it is). Every message
 * names the field and shows a corrected example.
 */

const KNOWN = new Set([
  'name',
  'description',
  'model',
  'background',
  'max_turns',
  'maxTurns',
  'memory',
  'tools',
  'disallowedTools',
  'disallowed_tools',
  'permissions',
  'permission_mode',
  'permissionMode',
  'skills',
  'hooks',
  'color',
  'runtime',
  'schedule',
  'auto_claim',
  'autoClaim',
  'board',
  'host',
]);
/** A host's name as hosts: spells it (config/hosts-schema.ts; not imported: it loads zod). */
const HOST_PATTERN = /^[a-z0-9][a-z0-9_-]{0,63}$/;
/** Definition names: the id pattern (§1), plus inner dots as Claude Code allows. */
export const CLAUDE_NAME_PATTERN = /^[a-zA-Z0-9](?:[a-zA-Z0-9_-]|\.(?!\.)){0,63}(?<!\.)$/;
const USER_SCOPES: readonly DefinitionScope[] = ['user', 'claude-user'];

export interface NormalizeInput {
  data: Record<string, unknown>;
  body: string;
  path: string;
  scope: DefinitionScope;
  config: DefinitionConfig;
  /** File name without extension, used to suggest a name. */
  stem: string;
}

export function normalizeDefinition(input: NormalizeInput): {
  definition?: Definition;
  errors: FieldIssue[];
  warnings: FieldIssue[];
} {
  const { data, config } = input;
  const errors: FieldIssue[] = [];
  const warnings: FieldIssue[] = [];
  const issues = { errors, warnings };

  warnUnknownFields(data, warnings);
  const { name, description, model } = normalizeIdentity(data, input.stem, issues);
  const { background, maxTurns, maxTurnsDeclared, memory } = normalizeLimits(data, config, issues);
  const tools = normalizeTools(data.tools, data.disallowedTools ?? data.disallowed_tools, issues);
  const perms = normalizePermissions(data, config, issues);
  const { permissionMode, secrets, passEnv } = perms;
  const skills = normalizeSkills(data.skills, issues);
  const hooks = projectOnlyHooks(normalizeHooks(data.hooks, issues), input.scope, warnings);
  const schedules = projectOnlySchedules(normalizeSchedule(data.schedule, name, issues), input.scope, warnings);
  const { color, runtime, autoClaim, board, host } = normalizeRunFields(data, issues);
  if (input.body.trim() === '') {
    warnings.push({
      field: 'body',
      message:
        'the prompt (the Markdown after the frontmatter) is empty (body) — write the instructions below the closing ---, e.g. "You review diffs for bugs."',
    });
  }

  if (
    errors.length ||
    !tools ||
    !skills ||
    !hooks ||
    !secrets ||
    !passEnv ||
    !schedules ||
    permissionMode === undefined
  )
    return { errors, warnings };
  const definition: Definition = {
    name: name as string,
    description: (description as string).trim(),
    ...(typeof model === 'string' ? { model: model.trim() } : {}),
    background: background as boolean,
    maxTurns: maxTurns as number,
    ...(memory ? { memory } : {}),
    tools,
    permissionMode,
    secrets,
    ...(passEnv.length ? { passEnv } : {}),
    timeoutSecs: perms.timeoutSecs as number,
    ttlSecs: perms.ttlSecs as number,
    skills,
    hooks,
    ...(schedules.length ? { schedules } : {}),
    ...(typeof color === 'string' ? { color } : {}),
    ...(typeof runtime === 'string' && isRuntimeName(runtime) ? { runtime } : {}),
    ...(autoClaim ? { autoClaim: true as const } : {}),
    ...(typeof board === 'string' ? { board } : {}),
    ...(typeof host === 'string' && host !== 'local' ? { host } : {}),
    body: input.body,
    declared: {
      tools: data.tools !== undefined && data.tools !== null,
      permissionMode: perms.declared.permissionMode,
      maxTurns: maxTurnsDeclared,
      timeoutSecs: perms.declared.timeoutSecs,
    },
    source: { path: input.path, scope: input.scope },
  };
  return { definition, errors, warnings };
}

/** A field the file has that no definition knows: ignored, with a warning naming the known ones. */
function warnUnknownFields(data: Record<string, unknown>, warnings: FieldIssue[]): void {
  for (const key of Object.keys(data)) {
    if (!KNOWN.has(key)) {
      warnings.push({
        field: key,
        message: `unknown field '${key}' is ignored (${key}) — check the spelling; known fields: name, description, model, background, max_turns, memory, tools, permissions, skills, hooks, schedule, color, runtime, auto_claim, board, host`,
      });
    }
  }
}

/** `name` (required, an id or a Claude name with dots), `description` (required text) and `model`, as written. */
function normalizeIdentity(
  data: Record<string, unknown>,
  stem: string,
  issues: Issues,
): { name: unknown; description: unknown; model: unknown } {
  const err = issueAdder(issues);
  const suggested = suggestName(stem);
  const name = data.name;
  if (name === undefined || name === null || name === '')
    err('name', `missing required field 'name' (name) — add it to the frontmatter, e.g. name: ${suggested}`);
  else if (typeof name === 'string' && !ID_PATTERN.test(name) && CLAUDE_NAME_PATTERN.test(name)) {
    // Claude Code accepts dots (`powershell-5.1-expert`, in the corpus); keep the name as written.
    issues.warnings.push({
      field: 'name',
      message: `name '${name}' contains '.', accepted for Claude compatibility; agent ids made from it use '-' instead (name) — prefer e.g. name: ${agentIdBase(name)}`,
    });
  } else if (typeof name !== 'string' || !ID_PATTERN.test(name)) {
    err(
      'name',
      `name ${typeof name === 'string' ? `'${name}'` : describe(name)} is not valid (name) — use 1-64 letters, digits, '_' or '-', starting with a letter or digit, e.g. name: ${suggestName(String(name)) || suggested}`,
    );
  }

  const description = data.description;
  if (
    description === undefined ||
    description === null ||
    (typeof description === 'string' && description.trim() === '')
  ) {
    err(
      'description',
      "missing required field 'description' (description) — say what the agent does and when to use it, e.g. description: Reviews code changes for bugs; use after every edit",
    );
  } else if (typeof description !== 'string') {
    err(
      'description',
      `description must be text, got ${describe(description)} (description) — quote it, e.g. description: "Reviews code changes for bugs"`,
    );
  }

  const model = data.model;
  if (model !== undefined && model !== null && (typeof model !== 'string' || model.trim() === '')) {
    err(
      'model',
      `model must be a model name such as sonnet, inherit or anthropic:claude-sonnet-4-5, got ${describe(model)} (model) — e.g. model: sonnet`,
    );
  }
  return { name, description, model };
}

/** `background`, `max_turns` and `memory`, each from config's default when absent; undefined when wrong. */
function normalizeLimits(
  data: Record<string, unknown>,
  config: DefinitionConfig,
  issues: Issues,
): {
  background: boolean | undefined;
  maxTurns: number | undefined;
  /** Whether the file set `max_turns` itself. */
  maxTurnsDeclared: boolean;
  memory: MemoryScope | null | undefined;
} {
  const err = issueAdder(issues);
  const background = optional(
    data.background,
    false,
    (v) => typeof v === 'boolean',
    () =>
      err(
        'background',
        `background must be true or false, got ${describe(data.background)} (background) — e.g. background: true`,
      ),
  );
  const maxTurnsRaw = data.max_turns ?? data.maxTurns;
  const maxTurns = optional(
    maxTurnsRaw,
    config.limits.max_turns,
    (v) => Number.isInteger(v) && (v as number) >= 1,
    () =>
      err(
        'max_turns',
        `max_turns must be a whole number of at least 1, got ${describe(maxTurnsRaw)} (max_turns) — e.g. max_turns: 20`,
      ),
  );
  const memory = optional<MemoryScope | null>(
    data.memory,
    config.agents.default_memory_scope,
    (v) => v === 'user' || v === 'project' || v === 'local',
    () =>
      err(
        'memory',
        `memory must be user, project or local, got ${describe(data.memory)} (memory) — e.g. memory: project`,
      ),
  );
  return { background, maxTurns, maxTurnsDeclared: maxTurnsRaw !== undefined && maxTurnsRaw !== null, memory };
}

/** A user-level file applies to every project; it must not run commands in one it never saw. */
function projectOnlyHooks(
  hooks: Definition['hooks'] | undefined,
  scope: DefinitionScope,
  warnings: FieldIssue[],
): Definition['hooks'] | undefined {
  if (!hooks || !USER_SCOPES.includes(scope) || !(hooks.PreToolUse.length || hooks.PostToolUse.length)) return hooks;
  warnings.push({
    field: 'hooks',
    message:
      "hooks in user-level definitions are ignored (hooks) — put the definition in the project's .flotilla/agents/ to use hooks there",
  });
  return { PreToolUse: [], PostToolUse: [] };
}

/** A user-level (or built-in) file is seen from every project; it must not start runs in one it never saw. */
function projectOnlySchedules<T>(
  schedules: T[] | undefined,
  scope: DefinitionScope,
  warnings: FieldIssue[],
): T[] | undefined {
  if (!schedules?.length || !(USER_SCOPES.includes(scope) || scope === 'builtin')) return schedules;
  warnings.push({
    field: 'schedule',
    message:
      "a schedule in a user-level definition is ignored (schedule) — put the definition in the project's .flotilla/agents/, or add it with flotilla schedule add",
  });
  return [];
}

/** How and where it runs: `color`, `runtime` (§13), `auto_claim` and `board` (§15), `host` (§17); as written. */
function normalizeRunFields(
  data: Record<string, unknown>,
  issues: Issues,
): { color: unknown; runtime: unknown; autoClaim: boolean | undefined; board: unknown; host: unknown } {
  const err = issueAdder(issues);
  const color = data.color;
  if (color !== undefined && color !== null && typeof color !== 'string')
    err('color', `color must be a color name, got ${describe(color)} (color) — e.g. color: blue`);

  const runtime = data.runtime;
  if (runtime !== undefined && runtime !== null && !(typeof runtime === 'string' && isRuntimeName(runtime))) {
    err(
      'runtime',
      `runtime must be one of ${RUNTIME_NAMES.join(', ')}, got ${describe(runtime)} (runtime) — e.g. runtime: claude`,
    );
  }

  // A teammate (§15): claims work from its board whenever it is idle.
  const autoClaimRaw = data.auto_claim ?? data.autoClaim;
  const autoClaim = optional(
    autoClaimRaw,
    false,
    (v) => typeof v === 'boolean',
    () =>
      err(
        'auto_claim',
        `auto_claim must be true or false, got ${describe(autoClaimRaw)} (auto_claim) — e.g. auto_claim: true`,
      ),
  );
  const board = data.board;
  if (board !== undefined && board !== null && !(typeof board === 'string' && BOARD_PATTERN.test(board))) {
    err(
      'board',
      `board must be a board name (lower-case letters, digits, '-', '_'), got ${describe(board)} (board) — e.g. board: backend`,
    );
  }

  // Where it runs (§17): a name under the person's hosts:, checked against them when it is spawned.
  const host = data.host;
  if (host !== undefined && host !== null && !(typeof host === 'string' && HOST_PATTERN.test(host))) {
    err(
      'host',
      `host must be a host name from hosts: in your config (lower-case letters, digits, '-', '_'), got ${describe(host)} (host) — e.g. host: gpu1`,
    );
  }
  return { color, runtime, autoClaim, board, host };
}

type Issues = { errors: FieldIssue[]; warnings: FieldIssue[] };

/** Records an error on a field; returns undefined, the value a wrong field normalizes to. */
function issueAdder(issues: Issues): (field: string, message: string) => undefined {
  return (field, message) => {
    issues.errors.push({ field, message });
    return undefined;
  };
}

/** A default when absent; the value when valid; otherwise `onBad()` is called. */
function optional<T>(v: unknown, fallback: T, valid: (v: unknown) => boolean, onBad: () => void): T | undefined {
  if (v === undefined || v === null) return fallback;
  if (valid(v)) return v as T;
  onBad();
  return undefined;
}

/** The base of agent ids for a definition name: dots become dashes (`powershell-5.1` → `powershell-5-1`). */
export function agentIdBase(name: string): string {
  return name.replace(/\./g, '-');
}

/** `My Agent!` → `my-agent`: a valid name close to what was written. */
export function suggestName(s: string): string {
  const slug = s
    .toLowerCase()
    .replace(/[^a-z0-9_-]+/g, '-')
    .replace(/^[-_]+|-+$/g, '')
    .slice(0, 64);
  return slug || 'my-agent';
}
