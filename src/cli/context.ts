import type { Command } from 'commander';
import { ensureState, resolveLayout, type Layout } from '../layout/layout.js';

/** What every command needs: the fleet layout (from --root / FLOTILLA_ROOT / the project). */
export interface CliContext {
  layout: Layout;
}

export function cliContext(cmd: Command, opts: { createState?: boolean } = {}): CliContext {
  const globals = cmd.optsWithGlobals<{ root?: string }>();
  const layout = resolveLayout({ root: globals.root });
  if (opts.createState !== false) ensureState(layout);
  return { layout };
}
