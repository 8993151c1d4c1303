import type { Command } from 'commander';
import type { LoadedConfig } from '../config/load.js';
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
  if (opts.createState !== false) ensureState(layout);
  return { layout };
}

/** Loads the effective config for a command, printing unknown-key warnings to stderr. */
export async function cliConfig(layout: Layout, flags: Record<string, unknown> = {}): Promise<LoadedConfig> {
  // Cached by the files and variables it comes from: a hit loads neither zod nor YAML (§14).
  const { loadConfigCached } = await import('../config/cached.js');
  const loaded = await loadConfigCached(layout, flags);
  for (const w of loaded.warnings) process.stderr.write(`flotilla: warning: ${w}\n`);
  return loaded;
}
