import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type { Layout } from '../layout/layout.js';
import { DEMO_SCRIPT } from '../layout/package.js';

/**
 * The bundled offline demo (`demo/`): a lead and two kinds of children on the scripted
 * model. `flotilla up` runs it when no model is configured. The children must be findable
 * by spawn like any definition, so their files are installed into the project's
 * `.flotilla/agents/` — with the absolute path of their scripts filled in, and a marker line
 * so a later run refreshes them. A file of the same name without the marker is the
 * person's own and is never touched.
 */

export const DEMO_DIR = dirname(DEMO_SCRIPT);
/** The demo's definitions, shipped with `{{demo_dir}}` where the scripts' folder goes. */
export const DEMO_AGENTS_DIR = join(DEMO_DIR, 'agents');
/** The definition the demo's root runs. */
export const DEMO_LEAD = 'demo-lead';
/** The task the demo's root starts with. */
export const DEMO_TASK =
  'Look around this project: list its TODO and FIXME comments and check its git working tree, using helper agents, then sum up what they found.';

const MARKER = "# Installed by 'flotilla up' for the offline demo (no model configured); refreshed on each demo run. Delete it freely.";

export interface DemoInstall {
  /** Files written or refreshed. */
  written: string[];
  /** Files left alone because a definition of that name is the person's own. */
  kept: string[];
}

/** The installed text of one shipped definition: the marker, then the file with the scripts' path filled in. */
export function demoDefinitionText(shipped: string, demoDir = DEMO_DIR): string {
  const filled = shipped.replace(/script:\{\{demo_dir\}\}\/([\w.-]+)/g, (_m, file: string) => JSON.stringify(`script:${join(demoDir, file)}`));
  // The marker is a YAML comment inside the frontmatter, so the file still loads as is.
  return filled.replace(/^---\r?\n/, `---\n${MARKER}\n`);
}

export function installDemoAgents(layout: Pick<Layout, 'agentsDir'>, opts: { demoDir?: string; shippedDir?: string } = {}): DemoInstall {
  const shippedDir = opts.shippedDir ?? DEMO_AGENTS_DIR;
  const result: DemoInstall = { written: [], kept: [] };
  mkdirSync(layout.agentsDir, { recursive: true });
  for (const name of readdirSync(shippedDir).filter((f) => f.endsWith('.md')).sort()) {
    const target = join(layout.agentsDir, name);
    const text = demoDefinitionText(readFileSync(join(shippedDir, name), 'utf8'), opts.demoDir);
    if (existsSync(target)) {
      const current = readFileSync(target, 'utf8');
      if (!current.includes(MARKER)) {
        result.kept.push(target);
        continue;
      }
      if (current === text) continue;
    }
    writeFileSync(target, text);
    result.written.push(target);
  }
  return result;
}
