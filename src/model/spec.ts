import type { Config } from '../config/schema.js';
import { UsageError } from '../errors.js';

/**
 * Model strings (§6): `provider:model-id`, aliases and `inherit`, and the order in which the
 * model of an agent is chosen. Pure: no I/O, no SDK imports.
 */

export type ModelSource = 'flag' | 'definition' | 'parent' | 'config' | 'env' | 'demo';

export const PROVIDERS = ['anthropic', 'openai', 'ollama', 'openai-compatible', 'script'] as const;
export type ProviderName = (typeof PROVIDERS)[number];

/** Used when only OPENAI_API_KEY is set and nothing names a model. */
export const OPENAI_DEFAULT_MODEL = 'openai:gpt-5';
/** Used when ANTHROPIC_API_KEY is set and nothing names a model (through the `sonnet` alias). */
export const ANTHROPIC_DEFAULT_ALIAS = 'sonnet';
const ANTHROPIC_FALLBACK = 'anthropic:claude-sonnet-4-5';

export interface ResolveModelInput {
  /** `--model` */
  flag?: string | undefined;
  /** The definition's `model:` (may be an alias or `inherit`). */
  definition?: string | undefined;
  /** The parent agent's resolved model. */
  parent?: string | undefined;
  config: Config;
  env: Record<string, string | undefined>;
  /** Absolute path of the demo script (`<package>/demo/lead.yaml`). */
  demoScript: string;
}

export interface ResolvedModel {
  spec: string;
  source: ModelSource;
}

/**
 * `--model` → definition (`inherit` = the parent's) → parent's model → config `model` →
 * ANTHROPIC_API_KEY → OPENAI_API_KEY → the scripted demo model. Aliases expand through
 * `models.aliases`.
 */
export function resolveModelSpec(input: ResolveModelInput): ResolvedModel {
  const aliases = input.config.models.aliases;
  const given = (v: string | null | undefined): v is string => typeof v === 'string' && v.trim() !== '';
  const parent = given(input.parent) ? expandAlias(input.parent.trim(), aliases) : undefined;

  for (const [value, source] of [
    [input.flag, 'flag'],
    [input.definition, 'definition'],
  ] as const) {
    if (!given(value)) continue;
    if (value.trim() === 'inherit') {
      // A root has no parent to inherit from: fall through to config and keys.
      if (parent) return { spec: parent, source: 'parent' };
      continue;
    }
    return { spec: expandAlias(value.trim(), aliases), source };
  }
  if (parent) return { spec: parent, source: 'parent' };
  if (given(input.config.model)) return { spec: expandAlias(input.config.model.trim(), aliases), source: 'config' };
  if (given(input.env.ANTHROPIC_API_KEY))
    return { spec: aliases[ANTHROPIC_DEFAULT_ALIAS] ?? ANTHROPIC_FALLBACK, source: 'env' };
  if (given(input.env.OPENAI_API_KEY)) return { spec: OPENAI_DEFAULT_MODEL, source: 'env' };
  return { spec: `script:${input.demoScript}`, source: 'demo' };
}

/** `sonnet` → `anthropic:claude-sonnet-4-5` (per config); anything else unchanged. */
export function expandAlias(value: string, aliases: Record<string, string>): string {
  return Object.hasOwn(aliases, value) ? aliases[value]! : value;
}

export interface ParsedSpec {
  provider: ProviderName;
  /** For openai-compatible: the configured provider name; otherwise undefined. */
  server?: string;
  /** The model id (for script: the file path). */
  modelId: string;
}

const FORMS =
  'use provider:model-id (anthropic:<id>, openai:<id>, ollama:<model>, openai-compatible:<name>/<model>, script:<file.yaml>) or an alias from models.aliases';

/** Splits a model string; throws a UsageError that lists the valid forms. */
export function parseModelSpec(spec: string): ParsedSpec {
  const colon = spec.indexOf(':');
  const provider = colon > 0 ? spec.slice(0, colon) : '';
  const rest = colon > 0 ? spec.slice(colon + 1).trim() : '';
  if (!(PROVIDERS as readonly string[]).includes(provider)) {
    const hint = colon > 0 ? `unknown provider '${provider}'` : `'${spec}' has no provider and is not an alias`;
    throw new UsageError(`invalid model '${spec}': ${hint} — ${FORMS}`, { code: 'model-invalid' });
  }
  if (!rest)
    throw new UsageError(`invalid model '${spec}': nothing after '${provider}:' — ${FORMS}`, { code: 'model-invalid' });
  if (provider === 'openai-compatible') {
    const slash = rest.indexOf('/');
    if (slash <= 0 || slash === rest.length - 1) {
      throw new UsageError(
        `invalid model '${spec}': write openai-compatible:<name>/<model>, where <name> is a key of models.providers in config`,
        {
          code: 'model-invalid',
        },
      );
    }
    return { provider, server: rest.slice(0, slash), modelId: rest.slice(slash + 1) };
  }
  return { provider: provider as ProviderName, modelId: rest };
}

/** True for `script:…` models; the pane and `status` say so (§6). */
export function isScripted(spec: string): boolean {
  return spec.startsWith('script:');
}
