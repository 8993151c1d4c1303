import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { DEMO_SCRIPT } from '../layout/package.js';
import { parseDefinition } from './parse.js';
import type { DefinitionConfig, LoadResult } from './types.js';

/**
 * The offline demo's definitions (`demo/agents/`), built in: `flotilla up` with no model
 * configured runs the demo lead, whose children spawn `todo-finder` and `checker`. They are
 * read from the package, never written into the project's `.flotilla/agents/` (that folder
 * is what a team commits; the demo leaves `git status` as it found it). They load only in
 * the demo's own tree: `up` starts its root with `FLOTILLA_DEMO=1`, which every spawn passes
 * on like any `FLOTILLA_*` setting (docs/decisions.md).
 */

/** The variable that marks a process of the demo's tree. */
export const DEMO_ENV = 'FLOTILLA_DEMO';
/** The folder of the demo's scripts. */
export const DEMO_DIR = dirname(DEMO_SCRIPT);
/** The shipped definitions, with `{{demo_dir}}` where the scripts' folder goes. */
export const DEMO_AGENTS_DIR = join(DEMO_DIR, 'agents');

export function inDemo(env: NodeJS.ProcessEnv): boolean {
  return env[DEMO_ENV] === '1';
}

/** A shipped definition's text with the scripts' absolute path filled in (quoted: the path may hold any character). */
export function demoDefinitionText(shipped: string, demoDir = DEMO_DIR): string {
  return shipped.replace(/script:\{\{demo_dir\}\}\/([\w.-]+)/g, (_m, file: string) =>
    JSON.stringify(`script:${join(demoDir, file)}`),
  );
}

/** The demo's definitions, scope `builtin`, each with its shipped file as its path. */
export function demoDefinitions(
  config: DefinitionConfig,
  opts: { shippedDir?: string; demoDir?: string } = {},
): LoadResult {
  const dir = opts.shippedDir ?? DEMO_AGENTS_DIR;
  const result: LoadResult = {
    definitions: [],
    errors: [],
    warnings: [],
    shadowed: [],
    trust: { trusted: true, ignored: [] },
  };
  for (const name of readdirSync(dir)
    .filter((f) => f.endsWith('.md'))
    .sort()) {
    const path = join(dir, name);
    const r = parseDefinition(demoDefinitionText(readFileSync(path, 'utf8'), opts.demoDir), {
      path,
      scope: 'builtin',
      config,
    });
    result.errors.push(...r.errors);
    result.warnings.push(...r.warnings);
    if (r.definition) result.definitions.push(r.definition);
  }
  return result;
}
