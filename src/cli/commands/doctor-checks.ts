import { execFileSync } from 'node:child_process';
import { accessSync, constants, existsSync, readFileSync } from 'node:fs';
import { dirname } from 'node:path';
import type { Config } from '../../config/schema.js';
import type { Layout } from '../../layout/layout.js';
import { TOOLS_DIR } from '../../layout/package.js';
import { changedSince, trustedEntry } from '../../config/trust-store.js';
import { parseTmuxVersion, tmuxNewEnough } from '../../tmux/version.js';
import { bubblewrapNests, bubblewrapUserNamespace, pidNamespace } from '../../tools/sandbox.js';
import { effectiveSandbox, type EffectiveSandbox } from '../../tools/sandbox-mode.js';
import { MINIMUM, VERSION, versionAtLeast } from '../../versions.js';
import { whichOnPath } from '../../on-path.js';
import { runtimeChecks } from './doctor-vendor-clis.js';

export interface Check {
  name: string;
  ok: boolean;
  /** Worth a look but not a failure: printed as WARN, and doctor still exits 0. */
  warn?: boolean;
  detail: string;
  fix: string;
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
    config = (await loadConfig({ layout, env })).config;
  } catch {
    /* defaults */
  }
  checks.push(
    ...containmentChecks(config?.security.sandbox ?? 'auto', env, await runsWithoutAsking(layout, config, env)),
  );
  checks.push(await slotCheck(layout));
  const bus = await (await import('./doctor-bus.js')).busCheck(layout, config);
  if (bus) checks.push(bus);
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
    // Codex's own sandbox starts inside ours, or Codex in its sandboxed modes runs outside
    // (harness/cli-host/sandboxed-cli.ts).
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

/**
 * What runs commands without asking: the configured default mode or a definition in dont_ask/bypass_permissions; null
 * when nothing does.
 */
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

/**
 * Slot names held by something that is not Flotilla (docs/security-fleet.md "Slots belong to harnesses"): ignored, but
 * worth a look.
 */
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
