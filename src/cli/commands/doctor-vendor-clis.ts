import type { Config } from '../../config/schema.js';
import { trustedEntry } from '../../config/trust-store.js';
import type { Layout } from '../../layout/layout.js';
import { isTestedVersion, MINIMUM, TESTED, parseVersion, versionAtLeast } from '../../versions.js';
import type { Check } from './doctor-checks.js';

/**
 * The vendor CLIs `--runtime` can run (§13): installed or not, and their versions. A missing
 * one nobody asks for is information; one a setting asks for (runtimes.<name>.command,
 * $FLOTILLA_<NAME>_BIN, a definition's `runtime:`) is a WARN. One older than MINIMUM fails:
 * its hooks may not speak our protocol; any other version than the tested one (TESTED) is a
 * WARN naming the tested version and how to pin it.
 */
export async function runtimeChecks(
  layout: Layout,
  config: Config | undefined,
  env: NodeJS.ProcessEnv,
): Promise<Check[]> {
  const [{ lookupRuntimeBinary, runtimeVersion }, { BUILT_RUNTIMES, loadRuntime }, { planLogin }] = await Promise.all([
    import('../../runtimes/binary.js'),
    import('../../runtimes/index.js'),
    import('../../runtimes/login.js'),
  ]);
  const wanted = config ? await definitionsByRuntime(layout, config, env) : new Map<string, string[]>();
  const out: Check[] = [];
  const projectTrusted = trustedEntry(layout, env) !== undefined;
  for (const rt of await Promise.all(BUILT_RUNTIMES.map(loadRuntime))) {
    const s = config?.runtimes[rt.name];
    const { found, skipped } = lookupRuntimeBinary(rt, env, {
      command: s?.command,
      project: layout.project,
      projectTrusted,
    });
    const version = found ? await runtimeVersion(found.path, env) : undefined;
    const login = planLogin(rt.name, env, s?.login ?? 'shared');
    out.push(
      runtimeCheck({
        name: rt.name,
        title: rt.title,
        npmPackage: rt.npmPackage,
        minimum: MINIMUM[rt.name],
        tested: TESTED[rt.name],
        found: found && {
          ...found,
          version,
          ...('fix' in login ? { login: 'none', loginFix: login.fix } : { login: login.via }),
        },
        env: env[rt.binEnv]?.trim() ? { name: rt.binEnv, value: env[rt.binEnv]!.trim() } : undefined,
        command: s?.command?.trim() || undefined,
        wantedBy: wanted.get(rt.name) ?? [],
        skipped,
      }),
    );
  }
  return out;
}

export interface RuntimeFacts {
  name: string;
  title: string;
  npmPackage: string;
  minimum: string;
  /** The version the runtime tests drive (TESTED); any other is a WARN. */
  tested: string;
  /** `loginFix`: the CLI has no login an agent could use (`login` is then 'none'), and what gives it one. */
  found: { path: string; via: string; version: string | undefined; login: string; loginFix?: string } | undefined;
  /** `$FLOTILLA_<NAME>_BIN` when set: it replaces every other place. */
  env: { name: string; value: string } | undefined;
  /** `runtimes.<name>.command` when set. */
  command: string | undefined;
  /** Definitions that name this runtime. */
  wantedBy: string[];
  /** CLIs inside the untrusted project that the lookup passed over (docs/security-trust.md "Folder trust"). */
  skipped?: string[];
}

/** Where a found CLI came from, in words (runtimes/binary.ts `BinarySource`). */
function via(source: string, runtime: string): string {
  switch (source) {
    case 'env':
      return `$FLOTILLA_${runtime.toUpperCase()}_BIN`;
    case 'config':
      return `config runtimes.${runtime}.command`;
    case 'project':
      return "the trusted project's node_modules/.bin";
    default:
      return source;
  }
}

/** One runtime's doctor line from what was found (pure, so every case is tested). */
export function runtimeCheck(f: RuntimeFacts): Check {
  const name = `runtime ${f.name}`;
  const install = `npm install -g ${f.npmPackage}`;
  const skipped = f.skipped?.length ? `; skipped ${f.skipped.join(', ')} (inside this untrusted folder)` : '';
  const trustFix = "'flotilla trust' lets agents run a CLI inside this folder, if the folder is yours";
  if (f.found) {
    const { version } = f.found;
    const detail = `${f.title} ${version ?? '(version unknown)'} at ${f.found.path} (via ${via(f.found.via, f.name)}); login: ${f.found.login}${skipped}`;
    // No login: each agent of this runtime would stop at its first request.
    const loginFix = f.found.loginFix;
    const fixes = (...more: string[]) => [loginFix, ...more].filter(Boolean).join('; ');
    const fine =
      skipped || loginFix
        ? { name, ok: true, warn: true, detail, fix: fixes(skipped ? trustFix : '') }
        : { name, ok: true, detail, fix: '' };
    // A version we cannot read is not held against it: the CLI may print it differently.
    if (version === undefined || parseVersion(version) === null) return fine;
    if (!versionAtLeast(version, f.minimum))
      return { name, ok: false, detail, fix: `upgrade it to ${f.minimum} or newer: ${install}@${f.tested}` };
    if (isTestedVersion(version, f.tested)) return fine;
    // Another version may open a dialog nobody answers: the agent then looks hung.
    return {
      name,
      ok: true,
      warn: true,
      detail: `${detail}; Flotilla was tested with ${f.tested}`,
      fix: fixes(
        `a version it was not tested with may stop an agent at a new prompt; pin the tested one: ${install}@${f.tested}`,
      ),
    };
  }
  if (skipped) {
    return {
      name,
      ok: true,
      warn: true,
      detail: `${f.title} not installed outside this folder${skipped}: agents with runtime ${f.name} cannot start`,
      fix: `${install}, or ${trustFix}`,
    };
  }
  if (f.env) {
    return {
      name,
      ok: true,
      warn: true,
      detail: `$${f.env.name} (${f.env.value}) is not an executable file: agents with runtime ${f.name} cannot start`,
      fix: `point $${f.env.name} at the ${f.title} CLI, or unset it to look on PATH`,
    };
  }
  if (f.command) {
    return {
      name,
      ok: true,
      warn: true,
      detail: `runtimes.${f.name}.command (${f.command}) is not an executable file: agents with runtime ${f.name} cannot start`,
      fix: `fix the path in the config, or set runtimes.${f.name}.command: null to look on PATH`,
    };
  }
  if (f.wantedBy.length) {
    return {
      name,
      ok: true,
      warn: true,
      detail: `${f.title} not installed, but ${f.wantedBy.length === 1 ? 'definition' : 'definitions'} ${f.wantedBy.join(', ')} ${f.wantedBy.length === 1 ? 'asks' : 'ask'} for it`,
      fix: `${install}, or set runtimes.${f.name}.command to its path`,
    };
  }
  return {
    name,
    ok: true,
    detail: `${f.title} not installed (optional: ${install}, or set runtimes.${f.name}.command)`,
    fix: '',
  };
}

/** Runtime name → the definitions (by name) that ask for it. A load error is `agents check`'s to report. */
async function definitionsByRuntime(
  layout: Layout,
  config: Config,
  env: NodeJS.ProcessEnv,
): Promise<Map<string, string[]>> {
  const out = new Map<string, string[]>();
  try {
    const { loadDefinitions } = await import('../../definitions/load.js');
    for (const def of (await loadDefinitions({ layout, config, env })).definitions) {
      if (def.runtime) out.set(def.runtime, [...(out.get(def.runtime) ?? []), def.name]);
    }
  } catch {
    /* none known */
  }
  return out;
}
