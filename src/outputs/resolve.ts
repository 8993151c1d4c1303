import { readdirSync } from 'node:fs';
import { isErrno } from '../errors.js';
import { resolvePrefix } from '../fleet/ids.js';
import { listIds } from '../fleet/registry.js';
import type { Layout } from '../layout/layout.js';

/**
 * Resolves an id prefix (§1) among every agent anything is known of: registry records,
 * transcripts and output files, so an agent whose record `flotilla gc` removed can still be
 * printed or resumed.
 */
export function resolveKnownAgent(layout: Layout, prefix: string): string {
  const ids = new Set(listIds(layout));
  for (const name of names(layout.transcriptsDir)) {
    if (name.startsWith('.')) continue;
    if (name.endsWith('.meta.json')) ids.add(name.slice(0, -'.meta.json'.length));
    else if (name.endsWith('.jsonl')) ids.add(name.slice(0, -'.jsonl'.length));
  }
  for (const name of names(layout.outputDir)) {
    if (!name.startsWith('.') && name.endsWith('.md')) ids.add(name.slice(0, -'.md'.length));
  }
  return resolvePrefix(prefix, [...ids].sort());
}

function names(dir: string): string[] {
  try {
    return readdirSync(dir);
  } catch (err) {
    if (isErrno(err, 'ENOENT')) return [];
    throw err;
  }
}
