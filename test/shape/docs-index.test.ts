import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

/** docs/README.md says what to read for what (CONTRIBUTING.md, "Commits and docs"): one line per page, no dead links. */
const docs = resolve(import.meta.dirname, '..', '..', 'docs');

describe('docs/README.md, the map of the docs', () => {
  const text = readFileSync(join(docs, 'README.md'), 'utf8');
  const links = [...text.matchAll(/\]\(([^)#]+\.md)\)/g)].map((m) => m[1]!);

  it('links every page in docs/', () => {
    const pages = readdirSync(docs).filter((n) => n.endsWith('.md') && n !== 'README.md');
    expect(pages.filter((p) => !links.includes(p))).toEqual([]);
  });

  it('links only pages that exist', () => {
    expect(links.filter((l) => !existsSync(join(docs, l)))).toEqual([]);
  });
});
