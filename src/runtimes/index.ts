import { FlotillaError, refusal } from '../errors.js';
import { findRuntimeBinary, type LookupPlaces } from './binary.js';
import { planLogin, type LoginMode } from './login.js';
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

/** A vendor runtime's settings from the config (`runtimes.<name>`). */
export interface RuntimeSettings {
  command: string | null;
  login: LoginMode;
}

/**
 * Why a spawn on `name` cannot run, decided before any record exists (§13): a runtime this
 * build does not have, a CLI that cannot be found, or one that could not authenticate (no key
 * in the environment and no login of the person's to share) — rather than a window that
 * waits at a login screen. Undefined: it can run.
 */
export async function runtimeRefusal(name: RuntimeName, env: NodeJS.ProcessEnv, settings?: RuntimeSettings, project?: string): Promise<FlotillaError | undefined> {
  if (name === 'flotilla') return undefined;
  if (!BUILT_RUNTIMES.includes(name)) return refusal('unknown-runtime', `spawn refused: runtime '${name}' is not built yet — use ${builtList()} (docs/runtimes.md)`, { runtime: name });
  const runtime = await loadRuntime(name);
  const places: LookupPlaces = { command: settings?.command, project };
  if (!findRuntimeBinary(runtime, env, places)) {
    const how = settings?.command ? `runtimes.${name}.command (${settings.command}) is not an executable file — fix the path` : `npm install -g ${runtime.npmPackage}, or set runtimes.${name}.command (or ${runtime.binEnv}) to its path`;
    return refusal('runtime-missing', `spawn refused: ${runtime.title} is not installed — ${how}`, { runtime: name });
  }
  const login = planLogin(runtime.name, env, settings?.login ?? 'shared');
  if ('fix' in login) return refusal('runtime-login', `spawn refused: ${login.fix}`, { runtime: name });
  return undefined;
}

function builtList(): string {
  return ['flotilla', ...BUILT_RUNTIMES].map((n) => `--runtime ${n}`).join(' or ');
}
