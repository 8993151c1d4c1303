import { FlotillaError, refusal } from '../errors.js';
import { findRuntimeBinary } from './binary.js';
import type { Runtime, RuntimeName, VendorRuntimeName } from './types.js';

export * from './types.js';

/** The vendor runtimes this build can run; the others are names a definition may not use yet. */
export const BUILT_RUNTIMES: readonly VendorRuntimeName[] = ['claude', 'codex', 'gemini'];

/** A vendor runtime's module, loaded only when an agent runs on it. */
export async function loadRuntime(name: VendorRuntimeName): Promise<Runtime> {
  switch (name) {
    case 'claude': return (await import('./claude.js')).claude;
    case 'codex': return (await import('./codex.js')).codex;
    case 'gemini': return (await import('./gemini.js')).gemini;
    default: throw new FlotillaError(`runtime '${name}' is not built yet — use ${builtList()} (docs/runtimes.md)`, { code: 'unknown-runtime' });
  }
}

/**
 * Why a spawn on `name` cannot run, decided before any record exists (§13): a runtime this
 * build does not have, or a CLI the spawner's environment cannot find. Undefined: it can run.
 */
export async function runtimeRefusal(name: RuntimeName, env: NodeJS.ProcessEnv): Promise<FlotillaError | undefined> {
  if (name === 'flotilla') return undefined;
  if (!BUILT_RUNTIMES.includes(name)) return refusal('unknown-runtime', `spawn refused: runtime '${name}' is not built yet — use ${builtList()} (docs/runtimes.md)`, { runtime: name });
  const runtime = await loadRuntime(name);
  if (findRuntimeBinary(runtime, env)) return undefined;
  return refusal('runtime-missing', `spawn refused: ${runtime.title} is not installed — npm install -g ${runtime.npmPackage}, or set ${runtime.binEnv} to its path`, { runtime: name });
}

function builtList(): string {
  return ['flotilla', ...BUILT_RUNTIMES].map((n) => `--runtime ${n}`).join(' or ');
}
