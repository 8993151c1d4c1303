import { readFileSync, readdirSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';

// Every `§N` / `§N.M` in the code and docs must name a section of docs/design.md (item M of
// §N's numbered list), so the contract the code cites is the one in the repository.
const repo = join(import.meta.dirname, '..', '..');
// The contract is docs/design.md and its parts, design-*.md, in the order design.md lists them.
const first = readFileSync(join(repo, 'docs', 'design.md'), 'utf8');
const parts = [...first.matchAll(/^- \[(design-[\w-]+\.md)\]/gm)].map((m) => m[1]!);
const design = [first, ...parts.map((part) => readFileSync(join(repo, 'docs', part), 'utf8'))].join('\n');

function sections(text: string): Map<number, Set<number>> {
  const found = new Map<number, Set<number>>();
  let current: Set<number> | null = null;
  for (const line of text.split('\n')) {
    const heading = /^## §(\d+) /.exec(line);
    if (heading) {
      current = new Set();
      found.set(Number(heading[1]), current);
      continue;
    }
    const item = /^(\d+)\. /.exec(line);
    if (item && current) current.add(Number(item[1]));
  }
  return found;
}

function filesUnder(dir: string, out: string[] = []): string[] {
  for (const name of readdirSync(dir)) {
    if (name === 'node_modules' || name === 'fixtures') continue;
    const path = join(dir, name);
    if (statSync(path).isDirectory()) filesUnder(path, out);
    else if (/\.(ts|tsx|md|mjs)$/.test(name)) out.push(path);
  }
  return out;
}

describe('docs/design.md', () => {
  const known = sections(design);

  it('has the sections §1–§18 in order, over its parts', () => {
    const onDisk = readdirSync(join(repo, 'docs')).filter((name) => /^design-[\w-]+\.md$/.test(name));
    expect([...parts].sort()).toEqual(onDisk.sort());
    expect([...known.keys()]).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18]);
    expect([...(known.get(5) ?? [])]).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
  });

  it('resolves every § reference in src/, docs/, test/, README.md and inbox/README.md', () => {
    const files = [
      ...filesUnder(join(repo, 'src')),
      ...filesUnder(join(repo, 'docs')),
      ...filesUnder(join(repo, 'test')),
      join(repo, 'README.md'),
      join(repo, 'inbox', 'README.md'),
    ];
    const broken: string[] = [];
    let count = 0;
    for (const file of files) {
      const lines = readFileSync(file, 'utf8').split('\n');
      lines.forEach((line, index) => {
        for (const match of line.matchAll(/§(\d+)(?:\.(\d+))?/g)) {
          count += 1;
          const where = `${relative(repo, file)}:${index + 1}: ${match[0]}`;
          const section = known.get(Number(match[1]));
          if (!section) broken.push(where);
          else if (match[2] !== undefined && !section.has(Number(match[2]))) broken.push(where);
        }
      });
    }
    expect(broken).toEqual([]);
    expect(count).toBeGreaterThan(100);
  });

  it('is the contract the docs point to (no reference to a design file outside the repo)', () => {
    const files = [...filesUnder(join(repo, 'src')), ...filesUnder(join(repo, 'docs')), join(repo, 'README.md')];
    const stale = files.filter((file) => readFileSync(file, 'utf8').includes('ARCHITECTURE.md'));
    expect(stale.map((file) => relative(repo, file))).toEqual([]);
  });
});
