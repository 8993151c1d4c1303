import { existsSync, readFileSync, readdirSync, statSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

/**
 * docs/README.md says what to read for what (CONTRIBUTING.md, "Commits and docs"): one line per page, no dead links.
 */
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

  it('keeps every page short enough to hold: none passes 600 lines (split by concept instead)', () => {
    const long = readdirSync(docs)
      .filter((n) => n.endsWith('.md'))
      .map((n) => ({ page: n, lines: readFileSync(join(docs, n), 'utf8').split('\n').length }))
      .filter(({ lines }) => lines > 600);
    expect(long).toEqual([]);
  });

  it('links only pages that exist', () => {
    expect(links.filter((l) => !existsSync(join(docs, l)))).toEqual([]);
  });
});

describe('links to a heading', () => {
  /** A heading's anchor as GitHub makes it: lower case, punctuation dropped, spaces to hyphens. */
  const slug = (heading: string) =>
    heading
      .trim()
      .toLowerCase()
      .replace(/[^\p{L}\p{N}_\- ]/gu, '')
      .replace(/ /g, '-');
  const repo = resolve(docs, '..');
  const pages = [
    ...readdirSync(docs)
      .filter((n) => n.endsWith('.md'))
      .map((n) => join(docs, n)),
    ...['README.md', 'CONTRIBUTING.md', 'inbox/README.md', 'test/README.md'].map((n) => join(repo, n)),
  ];
  const anchors = new Map(
    pages.map((p) => [p, new Set([...readFileSync(p, 'utf8').matchAll(/^#+ (.+)$/gm)].map((m) => slug(m[1]!)))]),
  );

  it('resolve in the page they name (docs split by concept move sections between pages)', () => {
    const broken: string[] = [];
    for (const page of pages) {
      for (const m of readFileSync(page, 'utf8').matchAll(/\]\(([^)#\s]*)#([^)\s]+)\)/g)) {
        const target = m[1] ? resolve(dirname(page), m[1]) : page;
        const known = anchors.get(target);
        if (known && !known.has(m[2]!)) broken.push(`${page.slice(repo.length + 1)}: ${m[0]}`);
      }
    }
    expect(broken).toEqual([]);
  });

  it('makes anchors as GitHub does', () => {
    expect(slug("Containment: the fleet's controls out of its agents' reach (§11)")).toBe(
      'containment-the-fleets-controls-out-of-its-agents-reach-11',
    );
    expect(slug('security.sandbox: auto, the default')).toBe('securitysandbox-auto-the-default');
  });
});
