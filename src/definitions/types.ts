import type { Config } from '../config/schema.js';
import type { PermissionMode } from '../policy/permission-mode.js';
import type { Declared } from '../policy/escalation.js';
import type { ToolsSpec } from '../policy/tool-policy.js';
import type { DefinitionHooks } from '../hooks/schema.js';
import type { RuntimeName } from '../runtimes/types.js';

/** Where a definition came from, in precedence order (§7). */
export type DefinitionScope = 'project' | 'claude-project' | 'user' | 'claude-user' | 'builtin';

export type MemoryScope = 'user' | 'project' | 'local';

/** A loaded, validated agent definition with every default applied. */
export interface Definition {
  name: string;
  description: string;
  /** As written (`sonnet`, `inherit`, `anthropic:…`); the model module resolves aliases. */
  model?: string;
  /** Default false. */
  background: boolean;
  /** Default `limits.max_turns` (20). */
  maxTurns: number;
  /** Default `agents.default_memory_scope` (none). */
  memory?: MemoryScope;
  /** The `tools` field as written; `resolveTools` turns it into the effective list. */
  tools: ToolsSpec;
  /** Default `agents.default_permission_mode` (`default`). */
  permissionMode: PermissionMode;
  /** Secret keys the agent may request (§11). */
  secrets: string[];
  /** `permissions.env`: provider keys its commands may see (otherwise removed, docs/security.md). */
  passEnv?: string[];
  /** Default `limits.timeout_secs` (600). */
  timeoutSecs: number;
  /** Lifetime of a granted secret. Default 300. */
  ttlSecs: number;
  skills: { include: string[]; exclude: string[] };
  hooks: DefinitionHooks;
  /** `schedule:` (§5.10): runs of this definition the scheduler fires; project definitions only. */
  schedules?: DefinitionSchedule[];
  color?: string;
  /** Who runs it (§13): `flotilla` (default), `claude`, `codex`, `gemini`. */
  runtime?: RuntimeName;
  /** `auto_claim: true` (§15): when idle, the agent claims the next claimable task on its board and works it. */
  autoClaim?: true;
  /** `board:` (§15): the task board it works from, unless its spawn names another. */
  board?: string;
  /**
   * `host:` (§17): the host of `hosts:` it opens on unless its spawn names one (`local`, this machine, is left out).
   */
  host?: string;
  /** The Markdown body: the agent's system prompt. */
  body: string;
  /** Which limits and policy fields the file set itself (the rest are defaults); see `fitToParent`. */
  declared: Declared;
  source: { path: string; scope: DefinitionScope };
}

/** One entry of a definition's `schedule:` block, shape-checked (the cron is checked by the scheduler). */
export interface DefinitionSchedule {
  name: string;
  cron: string;
  task: string;
  timezone: string | null;
  model: string | null;
  /** Who gets each run's completion: an agent id, or null for the person (`human`). */
  notify: string | null;
  overlap: 'skip' | 'queue' | 'allow';
  catchUp: 'none' | 'once';
  timeoutSecs: number | null;
  maxCostPerDay: number | null;
  maxTokensPerDay: number | null;
  background: boolean;
}

/** An error or warning about one file. `message` is one line saying what, where (field) and how to fix. */
export interface DefinitionIssue {
  path: string;
  /** The field concerned, e.g. `tools` or `permissions.permission_mode`; `file` for the file itself. */
  field: string;
  message: string;
  /** The definition's name, when it could be read. */
  name?: string;
}

export interface LoadResult {
  /** Winners only, in precedence order then by name. */
  definitions: Definition[];
  errors: DefinitionIssue[];
  warnings: DefinitionIssue[];
  /** Definitions hidden by one of the same name in a location that comes first. */
  shadowed: { name: string; path: string; scope: DefinitionScope; by: string }[];
  /**
   * Folder trust (docs/security-trust.md "Folder trust"): whether the project's files were trusted,
   * and what of them was ignored because they were not, one phrase each.
   */
  trust: { trusted: boolean; ignored: string[] };
}

/** The part of the config the loader reads. */
export interface DefinitionConfig {
  agents: Pick<
    Config['agents'],
    'default_permission_mode' | 'allow_bypass_permissions' | 'default_memory_scope' | 'default'
  >;
  limits: Pick<Config['limits'], 'max_turns' | 'timeout_secs'>;
}

/** One issue before the path is attached. */
export interface FieldIssue {
  field: string;
  message: string;
}

/** Formats an issue as the one line a person reads: `<path>: <message>`. */
export function formatIssue(issue: DefinitionIssue): string {
  return `${issue.path}: ${issue.message}`;
}
