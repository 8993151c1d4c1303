import { isSecretKey } from '../secrets/keys.js';
import { PERMISSION_MODES, parsePermissionMode, type PermissionMode } from '../policy/permission-mode.js';
import { describe } from './frontmatter.js';
import type { DefinitionConfig, FieldIssue } from './types.js';

/**
 * `permissions` (§7, §11): the permission mode, the secrets it may ask for, the provider keys
 * its commands get, and its time limits. Nested as Flotilla writes it; `permissionMode` at
 * top level as Claude Code writes it.
 */

type Issues = { errors: FieldIssue[]; warnings: FieldIssue[] };

const PERMISSION_KEYS = new Set(['permission_mode', 'permissionMode', 'secrets', 'timeout_secs', 'ttl_secs', 'env']);

/** A definition's permissions; a field is undefined when it is wrong (its error is in `issues`). */
export interface NormalizedPermissions {
  permissionMode: PermissionMode | undefined;
  secrets: string[] | undefined;
  passEnv: string[] | undefined;
  timeoutSecs: number | undefined;
  ttlSecs: number | undefined;
  /** Whether the file set these itself (not from config's defaults). */
  declared: { permissionMode: boolean; timeoutSecs: boolean };
}

export function normalizePermissions(
  data: Record<string, unknown>,
  config: DefinitionConfig,
  issues: Issues,
): NormalizedPermissions {
  const err = (field: string, message: string): void => {
    issues.errors.push({ field, message });
  };
  const p = permissionsMapping(data.permissions ?? {}, issues);
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

  const timeoutSecs = seconds(p.timeout_secs, config.limits.timeout_secs, () =>
    err(
      'permissions.timeout_secs',
      `permissions.timeout_secs must be a number of seconds > 0, got ${describe(p.timeout_secs)} (permissions.timeout_secs) — e.g. timeout_secs: 600`,
    ),
  );
  const ttlSecs = seconds(p.ttl_secs, 300, () =>
    err(
      'permissions.ttl_secs',
      `permissions.ttl_secs must be a number of seconds > 0, got ${describe(p.ttl_secs)} (permissions.ttl_secs) — e.g. ttl_secs: 300`,
    ),
  );
  return {
    permissionMode,
    secrets,
    passEnv,
    timeoutSecs,
    ttlSecs,
    declared: {
      permissionMode: modeRaw !== undefined && modeRaw !== null,
      timeoutSecs: p.timeout_secs !== undefined && p.timeout_secs !== null,
    },
  };
}

/** The `permissions` mapping, its unknown keys warned of; empty (with an error) when it is not a mapping. */
function permissionsMapping(perms: unknown, issues: Issues): Record<string, unknown> {
  if (typeof perms !== 'object' || perms === null || Array.isArray(perms)) {
    issues.errors.push({
      field: 'permissions',
      message: `permissions must be a mapping, got ${describe(perms)} (permissions) — e.g. permissions: {permission_mode: accept_edits, secrets: [github-token]}`,
    });
    return {};
  }
  const p = perms as Record<string, unknown>;
  for (const key of Object.keys(p)) {
    if (!PERMISSION_KEYS.has(key))
      issues.warnings.push({
        field: `permissions.${key}`,
        message: `unknown field 'permissions.${key}' is ignored (permissions) — known: permission_mode, secrets, timeout_secs, ttl_secs, env`,
      });
  }
  return p;
}

/** A number of seconds > 0: the default when absent, undefined (after `onBad()`) when wrong. */
function seconds(v: unknown, fallback: number, onBad: () => void): number | undefined {
  if (v === undefined || v === null) return fallback;
  if (typeof v === 'number' && Number.isFinite(v) && v > 0) return v;
  onBad();
  return undefined;
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
