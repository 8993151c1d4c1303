import { existsSync, readFileSync, readdirSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

/** docs/README.md says what to read for what (CONTRIBUTING.md, "Commits and docs"): one line per page, no dead links. */
const docs = resolve(import.meta.dirname, '..', '..', 'docs');

describe('docs/architecture.md, the folder map', () => {
  it('has one row per folder of src/, and no other', () => {
    const text = readFileSync(join(docs, 'architecture.md'), 'utf8');
    const map = text.slice(text.indexOf('## Folder map'), text.indexOf('\n## ', text.indexOf('## Folder map') + 1));
    const rows = [...map.matchAll(/^\| `([a-z-]+)\/` \|/gm)].map((m) => m[1]!);
    const src = resolve(docs, '..', 'src');
    const folders = readdirSync(src).filter((n) => statSync(join(src, n)).isDirectory());
    expect([...rows].sort()).toEqual(folders.sort());
    expect(new Set(rows).size).toBe(rows.length);
  });
});

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
