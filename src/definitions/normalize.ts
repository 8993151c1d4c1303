import { ID_PATTERN } from '../fleet/ids.js';
import { isSecretKey } from '../secrets/keys.js';
import { PERMISSION_MODES, parsePermissionMode, type PermissionMode } from '../policy/permission-mode.js';
import { describe } from './frontmatter.js';
import { normalizeHooks, normalizeSkills } from './normalize-extras.js';
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
const PERMISSION_KEYS = new Set(['permission_mode', 'permissionMode', 'secrets', 'timeout_secs', 'ttl_secs', 'env']);
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
  const err = (field: string, message: string): undefined => {
    errors.push({ field, message });
    return undefined;
  };

  for (const key of Object.keys(data)) {
    if (!KNOWN.has(key)) {
      warnings.push({
        field: key,
        message: `unknown field '${key}' is ignored (${key}) — check the spelling; known fields: name, description, model, background, max_turns, memory, tools, permissions, skills, hooks, schedule, color, runtime, auto_claim, board, host`,
      });
    }
  }

  const suggested = suggestName(input.stem);
  const name = data.name;
  if (name === undefined || name === null || name === '')
    err('name', `missing required field 'name' (name) — add it to the frontmatter, e.g. name: ${suggested}`);
  else if (typeof name === 'string' && !ID_PATTERN.test(name) && CLAUDE_NAME_PATTERN.test(name)) {
    // Claude Code accepts dots (`powershell-5.1-expert`, in the corpus); keep the name as written.
    warnings.push({
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

  const tools = normalizeTools(data.tools, data.disallowedTools ?? data.disallowed_tools, issues);

  // permissions: nested as Flotilla writes it; `permissionMode` at top level as Claude Code writes it.
  const perms = data.permissions ?? {};
  let p: Record<string, unknown> = {};
  if (typeof perms !== 'object' || perms === null || Array.isArray(perms)) {
    err(
      'permissions',
      `permissions must be a mapping, got ${describe(perms)} (permissions) — e.g. permissions: {permission_mode: accept_edits, secrets: [github-token]}`,
    );
  } else {
    p = perms as Record<string, unknown>;
    for (const key of Object.keys(p)) {
      if (!PERMISSION_KEYS.has(key))
        warnings.push({
          field: `permissions.${key}`,
          message: `unknown field 'permissions.${key}' is ignored (permissions) — known: permission_mode, secrets, timeout_secs, ttl_secs, env`,
        });
    }
  }
  const modeRaw = p.permission_mode ?? p.permissionMode ?? data.permission_mode ?? data.permissionMode;
  const permissionMode = normalizeMode(modeRaw, config, issues);

  const secretsRaw = p.secrets ?? [];
  const secrets =
    Array.isArray(secretsRaw) && secretsRaw.every((s) => typeof s === 'string' && isSecretKey(s))
      ? [...new Set(secretsRaw as string[])]
      : undefined;
  if (!secrets)
    err(
      'permissions.secrets',
      `permissions.secrets must be a list of secret key names (1-64 letters, digits, '_', '.' or '-', starting with a letter or digit), got ${describe(secretsRaw)} (permissions.secrets) — e.g. secrets: [github-token, npm-token]`,
    );

  // Provider keys reach the agent's commands only when listed here (docs/security-shell.md, "Keys").
  const envRaw = p.env ?? [];
  const passEnv =
    Array.isArray(envRaw) && envRaw.every((v) => typeof v === 'string' && /^[A-Za-z_][A-Za-z0-9_]*$/.test(v))
      ? [...new Set(envRaw as string[])]
      : undefined;
  if (!passEnv)
    err(
      'permissions.env',
      `permissions.env must be a list of environment variable names, got ${describe(envRaw)} (permissions.env) — e.g. env: [OPENAI_API_KEY]`,
    );

  const positive = (v: unknown): boolean => typeof v === 'number' && Number.isFinite(v) && v > 0;
  const timeoutSecs = optional(p.timeout_secs, config.limits.timeout_secs, positive, () =>
    err(
      'permissions.timeout_secs',
      `permissions.timeout_secs must be a number of seconds > 0, got ${describe(p.timeout_secs)} (permissions.timeout_secs) — e.g. timeout_secs: 600`,
    ),
  );
  const ttlSecs = optional(p.ttl_secs, 300, positive, () =>
    err(
      'permissions.ttl_secs',
      `permissions.ttl_secs must be a number of seconds > 0, got ${describe(p.ttl_secs)} (permissions.ttl_secs) — e.g. ttl_secs: 300`,
    ),
  );

  const skills = normalizeSkills(data.skills, issues);
  let hooks = normalizeHooks(data.hooks, issues);
  if (hooks && USER_SCOPES.includes(input.scope) && (hooks.PreToolUse.length || hooks.PostToolUse.length)) {
    // A user-level file applies to every project; it must not run commands in one it never saw.
    warnings.push({
      field: 'hooks',
      message:
        "hooks in user-level definitions are ignored (hooks) — put the definition in the project's .flotilla/agents/ to use hooks there",
    });
    hooks = { PreToolUse: [], PostToolUse: [] };
  }

  let schedules = normalizeSchedule(data.schedule, name, issues);
  if (schedules?.length && (USER_SCOPES.includes(input.scope) || input.scope === 'builtin')) {
    // A user-level file is seen from every project; it must not start runs in one it never saw.
    warnings.push({
      field: 'schedule',
      message:
        "a schedule in a user-level definition is ignored (schedule) — put the definition in the project's .flotilla/agents/, or add it with flotilla schedule add",
    });
    schedules = [];
  }

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
    timeoutSecs: timeoutSecs as number,
    ttlSecs: ttlSecs as number,
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
      permissionMode: modeRaw !== undefined && modeRaw !== null,
      maxTurns: maxTurnsRaw !== undefined && maxTurnsRaw !== null,
      timeoutSecs: p.timeout_secs !== undefined && p.timeout_secs !== null,
    },
    source: { path: input.path, scope: input.scope },
  };
  return { definition, errors, warnings };
}

function normalizeMode(
  raw: unknown,
  config: DefinitionConfig,
  issues: { errors: FieldIssue[]; warnings: FieldIssue[] },
): PermissionMode | undefined {
  const field = 'permissions.permission_mode';
  const fromDefault = raw === undefined || raw === null;
  const mode = fromDefault
    ? config.agents.default_permission_mode
    : typeof raw === 'string'
      ? parsePermissionMode(raw)
      : undefined;
  if (!mode) {
    issues.errors.push({
      field,
      message: `permission_mode ${describe(raw)} is not a mode (${field}) — use one of ${PERMISSION_MODES.join(', ')} (Claude's acceptEdits, dontAsk, bypassPermissions also work), e.g. permissions: {permission_mode: accept_edits}`,
    });
    return undefined;
  }
  if (mode === 'bypass_permissions') {
    const refused = bypassRefusal(config, fromDefault);
    if (refused) {
      issues.errors.push({ field, message: refused });
      return undefined;
    }
    issues.warnings.push({
      field,
      message: `permission_mode bypass_permissions runs every tool call without asking (${field}) — allowed by agents.allow_bypass_permissions; prefer accept_edits, e.g. permissions: {permission_mode: accept_edits}`,
    });
  }
  return mode;
}

/**
 * Why bypass_permissions is refused, or undefined when a config file allows it. Used for
 * every definition, the built-in one included, whether the mode is its own or the default.
 */
export function bypassRefusal(config: DefinitionConfig, fromDefault: boolean): string | undefined {
  if (config.agents.allow_bypass_permissions) return undefined;
  const field = 'permissions.permission_mode';
  return `permission_mode bypass_permissions${fromDefault ? ' (from agents.default_permission_mode)' : ''} is refused by config (${field}) — set agents.allow_bypass_permissions: true in .flotilla/config.yaml, or use a mode that keeps approvals, e.g. permissions: {permission_mode: accept_edits}`;
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
