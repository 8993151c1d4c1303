import type { LanguageModelV3 } from '@ai-sdk/provider';
import { isAbsolute, resolve } from 'node:path';
import type { Config } from '../config/schema.js';
import { FlotillaError } from '../errors.js';
import type { ScriptedModelOptions } from './scripted/scripted-model.js';
import { parseModelSpec } from './spec.js';

/**
 * Turns a model string into an AI SDK language model. Provider packages are imported only
 * when their provider is used, so commands that never call a model start fast (§14).
 */

export const OLLAMA_BASE_URL = 'http://localhost:11434/v1';

export interface CreateModelOptions {
  /** Base directory of a relative `script:` path (default: process.cwd()). */
  cwd?: string;
  /** Passed to the scripted model (tests observe prompts with `onCall`). */
  scripted?: Omit<ScriptedModelOptions, 'env' | 'modelId'>;
}

export async function createModel(
  spec: string,
  config: Config,
  env: Record<string, string | undefined>,
  opts: CreateModelOptions = {},
): Promise<LanguageModelV3> {
  const parsed = parseModelSpec(spec);
  switch (parsed.provider) {
    case 'anthropic': {
      const apiKey = requireKey(env, 'ANTHROPIC_API_KEY', spec);
      const { createAnthropic } = await import('@ai-sdk/anthropic');
      // The SDK's convention: the base URL includes the version, e.g. https://api.anthropic.com/v1.
      return createAnthropic({ apiKey, ...baseURL(env.ANTHROPIC_BASE_URL) })(parsed.modelId);
    }
    case 'openai': {
      const apiKey = requireKey(env, 'OPENAI_API_KEY', spec);
      const { createOpenAI } = await import('@ai-sdk/openai');
      return createOpenAI({ apiKey, ...baseURL(env.OPENAI_BASE_URL) })(parsed.modelId);
    }
    case 'ollama': {
      const server = config.models.providers.ollama;
      return compatible('ollama', server?.base_url ?? OLLAMA_BASE_URL, server?.api_key_env, env, parsed.modelId, spec);
    }
    case 'openai-compatible': {
      const name = parsed.server!;
      const server = config.models.providers[name];
      if (!server) {
        const known = Object.keys(config.models.providers);
        throw new FlotillaError(
          `model '${spec}' names provider '${name}', which config does not define — add models.providers.${name}: {base_url: …, api_key_env: …} to .flotilla/config.yaml` +
            (known.length ? ` (configured: ${known.join(', ')})` : ''),
          { code: 'model-provider-unknown' },
        );
      }
      return compatible(name, server.base_url, server.api_key_env, env, parsed.modelId, spec);
    }
    case 'script': {
      const file = isAbsolute(parsed.modelId) ? parsed.modelId : resolve(opts.cwd ?? process.cwd(), parsed.modelId);
      const { loadScriptedModel } = await import('./scripted/scripted-model.js');
      return loadScriptedModel(file, { ...opts.scripted, env });
    }
  }
}

async function compatible(
  name: string,
  url: string,
  keyEnv: string | undefined,
  env: Record<string, string | undefined>,
  modelId: string,
  spec: string,
): Promise<LanguageModelV3> {
  const apiKey = keyEnv ? requireKey(env, keyEnv, spec) : undefined;
  const { createOpenAICompatible } = await import('@ai-sdk/openai-compatible');
  // includeUsage asks the server for token counts in the stream (budgets need them).
  return createOpenAICompatible({ name, baseURL: url, includeUsage: true, ...(apiKey ? { apiKey } : {}) }).chatModel(
    modelId,
  );
}

function requireKey(env: Record<string, string | undefined>, name: string, spec: string): string {
  const key = env[name];
  if (!key || key.trim() === '') {
    throw new FlotillaError(
      `model '${spec}' needs ${name}, which is not set — export it, or choose another model with --model`,
      {
        code: 'model-key-missing',
      },
    );
  }
  return key;
}

function baseURL(url: string | undefined): { baseURL?: string } {
  return url && url.trim() !== '' ? { baseURL: url.trim() } : {};
}
