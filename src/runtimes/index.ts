import { FlotillaError, refusal } from '../errors.js';
import { lookupRuntimeBinary, type LookupPlaces } from './binary.js';
import { planLogin, type LoginMode } from './login.js';
import type { Runtime, RuntimeName, VendorRuntimeName } from './types.js';

export * from './types.js';

/** The vendor runtimes this build can run; the others are names a definition may not use yet. */
export const BUILT_RUNTIMES: readonly VendorRuntimeName[] = ['claude', 'codex', 'gemini'];

/** A vendor runtime's module, loaded only when an agent runs on it. */
export async function loadRuntime(name: VendorRuntimeName): Promise<Runtime> {
  switch (name) {
    case 'claude':
      return (await import('./claude.js')).claude;
    case 'codex':
      return (await import('./codex.js')).codex;
    case 'gemini':
      return (await import('./gemini.js')).gemini;
    default:
      throw new FlotillaError(`runtime '${name}' is not built yet — use ${builtList()} (docs/runtimes.md)`, {
        code: 'unknown-runtime',
      });
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
export async function runtimeRefusal(
  name: RuntimeName,
  env: NodeJS.ProcessEnv,
  settings?: RuntimeSettings,
  project?: { dir: string; trusted: boolean },
): Promise<FlotillaError | undefined> {
  if (name === 'flotilla') return undefined;
  if (!BUILT_RUNTIMES.includes(name))
    return refusal(
      'unknown-runtime',
      `spawn refused: runtime '${name}' is not built yet — use ${builtList()} (docs/runtimes.md)`,
      { runtime: name },
    );
  const runtime = await loadRuntime(name);
  const places: LookupPlaces = { command: settings?.command, project: project?.dir, projectTrusted: project?.trusted };
  const { found, skipped } = lookupRuntimeBinary(runtime, env, places);
  if (!found) {
    // The first place looked in names what is wrong: the variable, then the setting.
    const named = env[runtime.binEnv]?.trim();
    const how = named
      ? `${runtime.binEnv} (${named}) is not an executable file — fix the path, or unset it and npm install -g ${runtime.npmPackage}`
      : settings?.command
        ? `runtimes.${name}.command (${settings.command}) is not an executable file — fix the path`
        : `npm install -g ${runtime.npmPackage}, or set runtimes.${name}.command (or ${runtime.binEnv}) to its path`;
    // A CLI inside a folder nobody trusted is the repository's program, not the person's (docs/security-trust.md
    // "Folder trust").
    const untrusted = skipped.length
      ? ` (${skipped.join(', ')} is inside this untrusted folder and is not run; 'flotilla trust' if it is yours)`
      : '';
    return refusal('runtime-missing', `spawn refused: ${runtime.title} is not installed${untrusted} — ${how}`, {
      runtime: name,
    });
  }
  const login = planLogin(runtime.name, env, settings?.login ?? 'shared');
  if ('fix' in login) return refusal('runtime-login', `spawn refused: ${login.fix}`, { runtime: name });
  return undefined;
}

/**
 * The vendor CLIs inside an untrusted project that a lookup passes over (docs/security.md
 * "Folder trust"), as phrases for the trust notice: a repository that commits
 * `node_modules/.bin/claude` would otherwise pick the program its person runs.
 */
export async function skippedProjectClis(
  project: string,
  env: NodeJS.ProcessEnv,
  settings: Record<VendorRuntimeName, RuntimeSettings>,
): Promise<string[]> {
  const out: string[] = [];
  for (const name of BUILT_RUNTIMES) {
    // Every vendor runtime's binary is its name and its variable FLOTILLA_<NAME>_BIN: its module
    // (tens of ms to load) is read only for its title, when something was passed over.
    const { skipped } = lookupRuntimeBinary({ binary: name, binEnv: `FLOTILLA_${name.toUpperCase()}_BIN` }, env, {
      command: settings[name].command,
      project,
      projectTrusted: false,
    });
    if (!skipped.length) continue;
    const { title } = await loadRuntime(name);
    out.push(...skipped.map((p) => `${p} (a ${title} CLI inside this folder; not run)`));
  }
  return out;
}

function builtList(): string {
  return ['flotilla', ...BUILT_RUNTIMES].map((n) => `--runtime ${n}`).join(' or ');
}
