import { statSync } from 'node:fs';
import { isAbsolute, resolve } from 'node:path';
import type { Config } from '../config/schema.js';
import type { LoadResult } from '../definitions/types.js';
import { errorMessage, FlotillaError } from '../errors.js';
import { parseModelSpec, type ResolvedModel } from '../model/spec.js';

/**
 * What a spawn can know is wrong before anything opens (§5.2): the working
 * directory, the model string, its provider and key, a scripted model's file, the demo's
 * definitions. Each problem is a one-line error (exit 1) that says what to do; no window,
 * no record. The harness re-checks what it uses when it starts; what fails there ends the
 * record `failed` with the message.
 */

/** The child's working directory, which must exist and be a directory. */
export function checkCwd(cwd: string): void {
  let isDir = false;
  try {
    isDir = statSync(cwd).isDirectory();
  } catch {
    throw new FlotillaError(
      `spawn refused: working directory '${cwd}' does not exist — pass an existing directory with --cwd`,
      { code: 'cwd-missing' },
    );
  }
  if (!isDir)
    throw new FlotillaError(
      `spawn refused: working directory '${cwd}' is not a directory — pass a directory with --cwd`,
      { code: 'cwd-missing' },
    );
}

/** Keys the model needs in the spawner's environment (the child sees the same through its tmux server or parent). */
function requiredKey(spec: string, config: Config): string | undefined {
  const parsed = parseModelSpec(spec);
  switch (parsed.provider) {
    case 'anthropic':
      return 'ANTHROPIC_API_KEY';
    case 'openai':
      return 'OPENAI_API_KEY';
    case 'ollama':
      return config.models.providers.ollama?.api_key_env;
    case 'openai-compatible': {
      const server = config.models.providers[parsed.server!];
      if (!server) {
        const known = Object.keys(config.models.providers);
        throw new FlotillaError(
          `spawn refused: model '${spec}' names provider '${parsed.server!}', which config does not define — add models.providers.${parsed.server!}: {base_url: …} to .flotilla/config.yaml${known.length ? ` (configured: ${known.join(', ')})` : ''}`,
          { code: 'model-provider-unknown' },
        );
      }
      return server.api_key_env;
    }
    case 'script':
      return undefined;
  }
}

/** The model string parses, its provider is known and keyed, and a script file loads. */
export async function checkModel(
  model: ResolvedModel,
  config: Config,
  env: NodeJS.ProcessEnv,
  cwd: string,
): Promise<void> {
  const spec = model.spec;
  let key: string | undefined;
  try {
    key = requiredKey(spec, config);
  } catch (err) {
    if (err instanceof FlotillaError && err.code === 'model-provider-unknown') throw err;
    // A usage error elsewhere; here it is a refused spawn (exit 1), same words.
    throw new FlotillaError(errorMessage(err), { code: 'model-invalid' });
  }
  if (key && !env[key]?.trim()) {
    throw new FlotillaError(
      `spawn refused: model '${spec}' needs ${key}, which is not set — export it, or choose another model with --model`,
      { code: 'model-key-missing' },
    );
  }
  if (spec.startsWith('script:')) {
    const path = spec.slice('script:'.length).trim();
    const file = isAbsolute(path) ? path : resolve(cwd, path);
    const { loadScript } = await import('../model/scripted/script.js');
    try {
      loadScript(file);
    } catch (err) {
      throw new FlotillaError(`spawn refused: ${errorMessage(err)}`, { code: 'script-invalid' });
    }
  }
}

/** The offline demo's child definitions, which its lead script spawns. */
export const DEMO_CHILDREN = ['todo-finder', 'checker'] as const;

/**
 * No model configured (the demo model is the last resort, §6) only works where `flotilla up`
 * installed the demo's definitions; anywhere else the demo lead would fail half-way.
 */
export function checkDemoReady(model: ResolvedModel, loaded: LoadResult): void {
  if (model.source !== 'demo') return;
  if (DEMO_CHILDREN.every((name) => loaded.definitions.some((d) => d.name === name))) return;
  throw new FlotillaError(
    "spawn refused: no model is configured — set ANTHROPIC_API_KEY or OPENAI_API_KEY, pass --model provider:model-id, put 'model:' in .flotilla/config.yaml, or run 'flotilla up' once for the offline demo",
    { code: 'no-model' },
  );
}
