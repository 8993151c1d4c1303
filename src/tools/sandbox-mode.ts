import { execFile, spawnSync } from 'node:child_process';
import type { Config } from '../config/schema.js';
import { whichOnPath } from '../on-path.js';
import { bubblewrapUserNamespace, findBubblewrap, knowProbe, nestingProbeArgv, USERNS_PROBE } from './sandbox.js';

/**
 * The sandbox an agent's commands really get (docs/security.md "The default: auto").
 * `security.sandbox: auto`, the default, is bubblewrap where bubblewrap works here and none
 * elsewhere, with a warning; `bubblewrap` refuses to start without it; `none` is a choice.
 */

export type EffectiveSandbox = { kind: 'bubblewrap'; bwrap: string } | { kind: 'none'; chosen: boolean; why: string };

const works = new Map<string, boolean>();
/** Where `command -v bwrap` found it, by the PATH it looked in (probeSandboxSoon); null: not found. */
const found = new Map<string | undefined, string | null>();

/** What bwrap runs, as root, to show it works here. */
const ROOT_PROBE: readonly string[] = ['--ro-bind', '/', '/', '--unshare-pid', 'true'];

/** Whether bwrap runs a command here, as this user (probed once per binary and process). */
function bubblewrapWorks(bwrap: string): boolean {
  let ok = works.get(bwrap);
  if (ok === undefined) {
    ok =
      process.geteuid?.() === 0
        ? spawnSync(bwrap, ROOT_PROBE, { timeout: 10_000 }).status === 0
        : bubblewrapUserNamespace(bwrap);
    works.set(bwrap, ok);
  }
  return ok;
}

/** Resolves the setting; `bubblewrap` without bwrap throws the one-line refusal (findBubblewrap). */
export function effectiveSandbox(
  config: Pick<Config, 'security'>,
  env: NodeJS.ProcessEnv = process.env,
): EffectiveSandbox {
  const setting = config.security.sandbox;
  if (setting === 'none') return { kind: 'none', chosen: true, why: 'security.sandbox: none' };
  const where = () => found.get(env.PATH) ?? bwrapOnPath(env) ?? findBubblewrap(env);
  if (setting === 'bubblewrap') return { kind: 'bubblewrap', bwrap: where() };
  let bwrap: string;
  try {
    bwrap = where();
  } catch {
    return { kind: 'none', chosen: false, why: 'bwrap is not installed' };
  }
  return bubblewrapWorks(bwrap)
    ? { kind: 'bubblewrap', bwrap }
    : { kind: 'none', chosen: false, why: `${bwrap} cannot make a user namespace here` };
}

/** The one line `up` and a person's spawn print when `auto` found no sandbox; null otherwise. */
export function sandboxWarning(config: Pick<Config, 'security'>, env: NodeJS.ProcessEnv = process.env): string | null {
  const s = effectiveSandbox(config, env);
  if (s.kind !== 'none' || s.chosen) return null;
  return noSandboxLine(s.why);
}

function noSandboxLine(why: string): string {
  return `flotilla: no sandbox (security.sandbox: auto, but ${why}) — agents' commands run as you, with your files and network; install bubblewrap (apt-get install bubblewrap), or set security.sandbox: none to say so`;
}

/**
 * `sandboxWarning` for a caller that goes on meanwhile (a person's spawn, §14): with `auto` the
 * look for bwrap and its probes run as child processes beside the caller's own work
 * (`probeSandboxSoon`) instead of holding it up; any other setting is decided at once, as by
 * `sandboxWarning` (`bubblewrap` without bwrap throws its refusal here, before anything starts).
 */
export function sandboxWarningSoon(
  config: Pick<Config, 'security'>,
  env: NodeJS.ProcessEnv = process.env,
): Promise<string | null> {
  if (config.security.sandbox !== 'auto') return Promise.resolve(sandboxWarning(config, env));
  return probeSandboxSoon(config, env).then(() => sandboxWarning(config, env));
}

function runSoon(
  file: string,
  args: readonly string[],
  env: NodeJS.ProcessEnv,
): Promise<{ ok: boolean; stdout: string }> {
  return new Promise((resolve) =>
    execFile(file, args, { env, timeout: 10_000, encoding: 'utf8' }, (err, stdout) => resolve({ ok: !err, stdout })),
  );
}

/**
 * Asks now what `effectiveSandbox`, then a vendor CLI's sandbox (`bubblewrapUserNamespace`, and with `nests`
 * `bubblewrapNests`: Codex's own sandbox inside), will ask of bwrap, as child processes beside the caller's own work:
 * a vendor agent's harness starts this once it knows its runtime, so its CLI's exec no longer waits for `command -v
 * bwrap` and up to three probes in turn (~35 ms, §14). Each answer is kept as theirs; one still out when they ask is
 * asked again by them.
 */
export async function probeSandboxSoon(
  config: Pick<Config, 'security'>,
  env: NodeJS.ProcessEnv,
  nests = false,
): Promise<void> {
  const setting = config.security.sandbox;
  if (setting === 'none' || found.has(env.PATH)) return;
  let bwrap = bwrapOnPath(env);
  if (bwrap === undefined) {
    const where = await runSoon('sh', ['-c', 'command -v bwrap'], env);
    bwrap = where.ok ? where.stdout.trim() : '';
  }
  found.set(env.PATH, bwrap || null);
  if (!bwrap) return;
  const asRoot = setting === 'auto' && process.geteuid?.() === 0 && !works.has(bwrap);
  const [rootProbe, userns] = await Promise.all([
    asRoot ? runSoon(bwrap, ROOT_PROBE, env) : undefined,
    runSoon(bwrap, USERNS_PROBE, env),
  ]);
  knowProbe('userns', bwrap, userns.ok);
  // As bubblewrapWorks asks: as root, whether bwrap runs at all; as anyone else, whether it makes a user namespace.
  if (rootProbe) works.set(bwrap, rootProbe.ok);
  else if (process.geteuid?.() !== 0) works.set(bwrap, userns.ok);
  if (!nests) return;
  const [file, ...args] = nestingProbeArgv(bwrap, userns.ok);
  knowProbe('nests', bwrap, (await runSoon(file!, args, env)).ok);
}

/** `command -v bwrap`, found here (on-path.ts); undefined without a PATH, where each sh has a default of its own. */
function bwrapOnPath(env: NodeJS.ProcessEnv): string | null | undefined {
  return env.PATH === undefined ? undefined : whichOnPath('bwrap', env.PATH);
}
