import { readdirSync, readFileSync, rmdirSync, unlinkSync } from 'node:fs';
import { join } from 'node:path';
import type { Layout } from '../layout/layout.js';

/**
 * The bundled offline demo (`demo/`): a lead and two kinds of children on the scripted
 * model. `flotilla up` runs it when no model is configured. Its definitions are built in
 * (`definitions/demo.ts`), so the demo writes nothing into the person's project but the
 * git-ignored fleet state.
 */

/** The definition the demo's root runs. */
export const DEMO_LEAD = 'demo-lead';
/** The task the demo's root starts with. */
export const DEMO_TASK =
  'Look around this project: list its TODO and FIXME comments and check its git working tree, using helper agents, then sum up what they found.';

/** The first line of the definitions older versions installed into `.flotilla/agents/`. */
const OLD_MARKER =
  "# Installed by 'flotilla up' for the offline demo (no model configured); refreshed on each demo run. Delete it freely.";

/**
 * Removes the demo definitions an older `flotilla up` wrote into `.flotilla/agents/` (they
 * say "Delete it freely"), and the folder when that leaves it empty. A file without the
 * marker is the person's and stays.
 */
export function removeInstalledDemoAgents(layout: Pick<Layout, 'agentsDir'>): string[] {
  let names: string[];
  try {
    names = readdirSync(layout.agentsDir).filter((n) => n.endsWith('.md'));
  } catch {
    return [];
  }
  const removed: string[] = [];
  for (const name of names) {
    const path = join(layout.agentsDir, name);
    try {
      if (!readFileSync(path, 'utf8').includes(OLD_MARKER)) continue;
      unlinkSync(path);
      removed.push(path);
    } catch {
      // Unreadable or gone: not ours to worry about.
    }
  }
  if (removed.length > 0) {
    try {
      rmdirSync(layout.agentsDir);
    } catch {
      /* not empty: the person's files stay */
    }
  }
  return removed;
}
