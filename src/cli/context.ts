import type { Command } from 'commander';
import type { LoadedConfig } from '../config/load.js';
import { existsSync } from 'node:fs';
import { isCheckoutTop } from '../layout/git-top.js';
import { claimState, markState } from '../fleet/state-claim.js';
import { ensureState, resolveLayout, type Layout } from '../layout/layout.js';

/** What every command needs: the fleet layout (from --root / FLOTILLA_ROOT / the project). */
export interface CliContext {
  layout: Layout;
}

export function cliContext(cmd: Command, opts: { createState?: boolean } = {}): CliContext {
  return contextOf(cmd.optsWithGlobals<Globals>(), opts);
}

/** The program's own options (`--root`), wherever on the command line they were given. */
export interface Globals {
  root?: string | undefined;
}

/** `cliContext` from the program's options, for commands run without commander (fast.ts). */
export function contextOf(globals: Globals, opts: { createState?: boolean } = {}): CliContext {
  const layout = resolveLayout({ root: globals.root });
  // State that came with a clone is moved aside before anything reads it.
  const { movedTo } = claimState(layout);
  if (movedTo)
    process.stderr.write(
      `flotilla: ${layout.state} came with the repository (git tracks it), so it was moved to ${movedTo} and nothing in it is used\n`,
    );
  if (opts.createState !== false && !existsSync(layout.registryTmp)) {
    ensureState(layout);
    markState(layout);
  }
  return { layout };
}

/**
 * For the read-only commands (`status`, `watch`, `audit`, `doctor`), which never create a
 * fleet root: the line saying there is no fleet here yet and where one would be, or
 * undefined when there is one. Only `up`, a spawn or a send makes a fleet.
 */
export function noFleetLine(layout: Layout): string | undefined {
  if (existsSync(layout.registryDir)) return undefined;
  if (existsSync(layout.root))
    return `no agent has run in ${layout.root} yet — start one with 'flotilla up' or spawn-agent`;
  if (isCheckoutTop(layout.project))
    return `no fleet here: ${layout.root} does not exist yet — 'flotilla up' or spawn-agent in ${layout.project} makes it (or pass --root DIR)`;
  return `no fleet here: ${layout.root} does not exist yet (${layout.project} is not in a git checkout, so a fleet would be made right there) — 'flotilla up' or spawn-agent makes it, or pass --root DIR`;
}

/** Loads the effective config for a command, printing unknown-key warnings to stderr. */
export async function cliConfig(layout: Layout, flags: Record<string, unknown> = {}): Promise<LoadedConfig> {
  // Cached by the files and variables it comes from: a hit loads neither zod nor YAML, a miss no zod (§14).
  const { loadConfigCached } = await import('../config/cached.js');
  const loaded = await loadConfigCached(layout, flags);
  for (const w of loaded.warnings) process.stderr.write(`flotilla: warning: ${w}\n`);
  return loaded;
}
