import { parseFrontmatter } from './frontmatter.js';
import { normalizeDefinition } from './normalize.js';
import type { Definition, DefinitionConfig, DefinitionIssue, DefinitionScope } from './types.js';

/** Parses one definition file's text (no file system): frontmatter, fields, defaults. */
export function parseDefinition(
  text: string,
  opts: { path: string; scope: DefinitionScope; config: DefinitionConfig },
): { definition?: Definition; errors: DefinitionIssue[]; warnings: DefinitionIssue[] } {
  const at = (i: { field: string; message: string }, name?: string): DefinitionIssue => ({
    path: opts.path,
    ...i,
    ...(name ? { name } : {}),
  });
  if (text.includes('\0')) {
    return {
      errors: [
        at({
          field: 'file',
          message:
            'file contains NUL bytes (file) — save it as plain UTF-8 text, e.g. re-save it from your editor as Markdown',
        }),
      ],
      warnings: [],
    };
  }
  const fm = parseFrontmatter(text);
  if (!fm.ok) return { errors: [at(fm.error)], warnings: [] };
  const stem = opts.path.replace(/^.*[\\/]/, '').replace(/\.[^.]*$/, '');
  const r = normalizeDefinition({
    data: fm.data,
    body: fm.body,
    path: opts.path,
    scope: opts.scope,
    config: opts.config,
    stem,
  });
  const name = typeof fm.data.name === 'string' ? fm.data.name : undefined;
  return {
    ...(r.definition ? { definition: r.definition } : {}),
    errors: r.errors.map((e) => at(e, name)),
    warnings: [...fm.warnings, ...r.warnings].map((w) => at(w, name)),
  };
}
