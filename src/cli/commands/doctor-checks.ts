import { execFileSync } from 'node:child_process';
import { accessSync, constants, existsSync, readFileSync } from 'node:fs';
import { delimiter, dirname, join } from 'node:path';
import type { Config } from '../../config/schema.js';
import type { Layout } from '../../layout/layout.js';
import { TOOLS_DIR } from '../../layout/package.js';
import { changedSince, trustedEntry } from '../../config/trust-store.js';
import { parseTmuxVersion, tmuxNewEnough } from '../../tmux/version.js';
import { bubblewrapNests, bubblewrapUserNamespace, pidNamespace } from '../../tools/sandbox.js';
import { effectiveSandbox, type EffectiveSandbox } from '../../tools/sandbox-mode.js';
import { isTestedVersion, MINIMUM, TESTED, VERSION, parseVersion, versionAtLeast } from '../../versions.js';

export interface Check {
  name: string;
  ok: boolean;
  /** Worth a look but not a failure: printed as WARN, and doctor still exits 0. */
  warn?: boolean;
  detail: string;
  fix: string;
}

/** The first executable file called `name` on a PATH, or null. */
export function whichOnPath(name: string, path: string | undefined): string | null {
  for (const dir of (path ?? '').split(delimiter)) {
    if (!dir) continue;
    const file = join(dir, name);
    try {
      accessSync(file, constants.X_OK);
      return file;
    } catch {
      // Not here.
    }
  }
  return null;
}

/** Whether a shell here finds `flotilla` and `spawn-agent` (README quick start, §2). */
export function commandChecks(env: NodeJS.ProcessEnv = process.env): Check[] {
  return ['flotilla', 'spawn-agent'].map((name) => {
    const found = whichOnPath(name, env.PATH);
    return {
      name: `${name} on PATH`,
      ok: found !== null,
      detail: found ?? 'not found',
      fix: `add it for this shell: export PATH="${TOOLS_DIR.replace(/\/$/, '')}:$PATH" (or run 'npm link' once in ${dirname(TOOLS_DIR)}); agents' shells always have it`,
    };
  });
}

export async function runChecks(layout: Layout, env: NodeJS.ProcessEnv = process.env): Promise<Check[]> {
  // Its own version first: `doctor --host` compares the one there with the one here.
  const checks: Check[] = [{ name: 'flotilla', ok: true, detail: VERSION, fix: '' }];
  const node = process.versions.node;
  checks.push({
    name: 'node',
    ok: versionAtLeast(node, MINIMUM.node),
    detail: `v${node}`,
    fix: `install Node.js ${MINIMUM.node} or newer`,
  });

  let tmux = '';
  try {
    tmux = execFileSync('tmux', ['-V'], { encoding: 'utf8' }).trim();
  } catch {
    /* missing */
  }
  const tv = parseTmuxVersion(tmux);
  checks.push({
    name: 'tmux',
    ok: tv !== null && tmuxNewEnough(tv),
    detail: tmux || 'not found',
    fix: tmux
      ? `upgrade tmux to ${MINIMUM.tmux} or newer`
      : `install tmux ${MINIMUM.tmux}+ (apt-get install tmux / brew install tmux)`,
  });

  for (const [file, min] of [
    ['max_user_watches', 8192],
    ['max_user_instances', 128],
  ] as const) {
    const path = `/proc/sys/fs/inotify/${file}`;
    if (!existsSync(path)) continue;
    const v = parseInt(readFileSync(path, 'utf8'), 10);
    checks.push({
      name: `inotify ${file}`,
      ok: v >= min,
      detail: String(v),
      fix: `raise it: sudo sysctl fs.inotify.${file}=${min * 4} (inboxes fall back to slower rescans otherwise)`,
    });
  }

  let writable = false;
  let detail = layout.root;
  try {
    // A check only looks: the root is made by the first `up` or spawn, never by doctor.
    let target = layout.root;
    while (!existsSync(target) && dirname(target) !== target) target = dirname(target);
    accessSync(target, constants.W_OK);
    if (target !== layout.root) detail = `${layout.root} (not created yet; ${target} is writable)`;
    writable = true;
  } catch (err) {
    detail = `${layout.root}: ${(err as Error).message}`;
  }
  checks.push({
    name: 'fleet root',
    ok: writable,
    detail,
    fix: 'make the directory writable or choose another with --root / FLOTILLA_ROOT',
  });
  checks.push(...commandChecks(env));
  checks.push(trustCheck(layout, env));
  const { loadConfig } = await import('../../config/load.js');
  // An invalid config is reported by its own commands; the checks then judge the defaults.
  let config: Config | undefined;
  try {
    config = loadConfig({ layout, env }).config;
  } catch {
    /* defaults */
  }
  checks.push(
    ...containmentChecks(config?.security.sandbox ?? 'auto', env, await runsWithoutAsking(layout, config, env)),
  );
  checks.push(await slotCheck(layout));
  checks.push(...(await runtimeChecks(layout, config, env)));
  return checks;
}

/**
 * What the kernel enforces here (docs/security.md): lineage needs a pid namespace per tool
 * command; the bubblewrap sandbox needs bwrap and, for a non-root user, user namespaces.
 */
function containmentChecks(
  sandbox: Config['security']['sandbox'],
  env: NodeJS.ProcessEnv,
  asksNobody: string | null,
): Check[] {
  const ns = pidNamespace();
  const checks: Check[] = [
    {
      name: 'lineage (pid namespace per command)',
      ok: ns.available,
      detail: ns.available
        ? ns.prefix.join(' ')
        : `${ns.reason} — UNENFORCED: a command that detaches (setsid, nohup, double fork) can spawn, send and approve outside its agent's lineage`,
      fix: 'use Linux with util-linux (unshare, setpriv) and, as a non-root user, user namespaces enabled (sysctl user.max_user_namespaces=15000; kernel.unprivileged_userns_clone=1 on Debian kernels)',
    },
  ];
  checks.push(sandboxCheck(sandbox, env, asksNobody));
  return checks;
}

/**
 * The sandbox agents' commands really get (tools/sandbox-mode.ts), named as it is, not as
 * configured; a WARN when it is none while something runs commands without asking, or when
 * a setting asks for bwrap that is missing (docs/decisions.md "doctor judges the settings").
 */
function sandboxCheck(
  sandbox: Config['security']['sandbox'],
  env: NodeJS.ProcessEnv,
  asksNobody: string | null,
): Check {
  const name = `sandbox (security.sandbox: ${sandbox})`;
  let effective: EffectiveSandbox;
  try {
    effective = effectiveSandbox({ security: { sandbox } as Config['security'] }, env);
  } catch {
    return {
      name,
      ok: true,
      warn: true,
      detail: 'bwrap not found, but security.sandbox is bubblewrap: every agent will refuse to start its commands',
      fix: 'install bubblewrap (apt-get install bubblewrap / it is Linux only) or set security.sandbox: none',
    };
  }
  if (effective.kind === 'bubblewrap') {
    const userns =
      process.geteuid?.() === 0 && !bubblewrapUserNamespace(effective.bwrap)
        ? 'no user namespaces; as root every capability is dropped'
        : 'user + pid namespaces, no capabilities';
    const detail = `effective: bubblewrap (${effective.bwrap}: ${userns})`;
    // Codex's own sandbox starts inside ours, or Codex in its sandboxed modes runs outside (harness/cli-host/sandboxed-cli.ts).
    if (!bubblewrapNests(effective.bwrap)) {
      return {
        name,
        ok: true,
        warn: true,
        detail: `${detail}, but a bubblewrap cannot start inside it here: Codex in plan, default and accept_edits runs outside it, its own sandbox the only boundary, and your credentials are within its commands' reach`,
        fix: "allow bwrap a user namespace inside another (a security module or a setuid bwrap forbids it here), or give Codex members dont_ask, whose commands run in Flotilla's sandbox",
      };
    }
    return { name, ok: true, detail, fix: '' };
  }
  return {
    name,
    ok: true,
    warn: asksNobody !== null,
    detail: `effective: none (${effective.why})${asksNobody ? ` while ${asksNobody} runs commands without asking — they run as you, with your files, keys and network` : ''}`,
    fix: asksNobody
      ? 'install bubblewrap (apt-get install bubblewrap) and allow user namespaces, or lower that permission mode to default'
      : '',
  };
}

/** What runs commands without asking: the configured default mode or a definition in dont_ask/bypass_permissions; null when nothing does. */
async function runsWithoutAsking(
  layout: Layout,
  config: Config | undefined,
  env: NodeJS.ProcessEnv,
): Promise<string | null> {
  const free = (mode: string): boolean => mode === 'dont_ask' || mode === 'bypass_permissions';
  if (!config) return null;
  if (free(config.agents.default_permission_mode))
    return `agents.default_permission_mode ${config.agents.default_permission_mode}`;
  try {
    const { loadDefinitions } = await import('../../definitions/load.js');
    const found = (await loadDefinitions({ layout, config, env })).definitions.find((d) => free(d.permissionMode));
    return found ? `definition '${found.name}' (${found.permissionMode})` : null;
  } catch {
    return null;
  }
}

/** Slot names held by something that is not Flotilla (docs/security-fleet.md "Slots belong to harnesses"): ignored, but worth a look. */
async function slotCheck(layout: Layout): Promise<Check> {
  const { slotImpostors, impostorLines } = await import('../../fleet/slots.js');
  const found = existsSync(layout.root) ? slotImpostors(layout) : [];
  return {
    name: 'slots',
    ok: true,
    warn: found.length > 0,
    detail: found.length ? impostorLines(found).join('; ') : 'held only by Flotilla harnesses and spawners',
    fix: found.length
      ? "a process that is not Flotilla binds the fleet's slot names; find out what started it and end it"
      : '',
  };
}

/**
 * The vendor CLIs `--runtime` can run (§13): installed or not, and their versions. A missing
 * one nobody asks for is information; one a setting asks for (runtimes.<name>.command,
 * $FLOTILLA_<NAME>_BIN, a definition's `runtime:`) is a WARN. One older than MINIMUM fails:
 * its hooks may not speak our protocol; any other version than the tested one (TESTED) is a
 * WARN naming the tested version and how to pin it.
 */
async function runtimeChecks(layout: Layout, config: Config | undefined, env: NodeJS.ProcessEnv): Promise<Check[]> {
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
        found: found && { ...found, version, login: 'fix' in login ? `none — ${login.fix}` : login.via },
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
  found: { path: string; via: string; version: string | undefined; login: string } | undefined;
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
    const fine = skipped ? { name, ok: true, warn: true, detail, fix: trustFix } : { name, ok: true, detail, fix: '' };
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
      fix: `a version it was not tested with may stop an agent at a new prompt; pin the tested one: ${install}@${f.tested}`,
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

/** Folder trust (docs/security-trust.md "Folder trust"): whether it is trusted, and whether its files changed since. */
export function trustCheck(layout: Layout, env: NodeJS.ProcessEnv = process.env): Check {
  const entry = trustedEntry(layout, env);
  const name = 'folder trust';
  if (!entry) {
    return {
      name,
      ok: true,
      detail: `${layout.project} is not trusted: its own config and definitions run no hooks, no mode above default and shadow nothing`,
      fix: '',
    };
  }
  const changed = changedSince(layout, entry);
  if (!changed.length) return { name, ok: true, detail: `${layout.project} trusted since ${entry.trustedAt}`, fix: '' };
  return {
    name,
    ok: true,
    warn: true,
    detail: `${layout.project}: files changed since you trusted it on ${entry.trustedAt}: ${changed.join(', ')}`,
    fix: "read the changes (hooks, permission modes, config), then 'flotilla trust' to accept them or 'flotilla trust --revoke'",
  };
}
