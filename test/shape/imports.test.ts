import { readFileSync, readdirSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

/**
 * Imports point one way (CONTRIBUTING.md, "The floors"; docs/architecture.md "Folder map"): each
 * folder of src/ stands on a floor, and a folder imports only from folders on lower floors —
 * never its own floor or a higher one. The floors are read from CONTRIBUTING.md's table, so the
 * table a contributor reads is the rule the test applies.
 */
const repo = resolve(import.meta.dirname, '..', '..');
const src = join(repo, 'src');

/**
 * Folder → floor, from the table's rows (`| 14 (top) | \`cli/\` | … |`); the files directly in src/ are floor 0, `.`.
 */
export function floorsFrom(markdown: string): Map<string, number> {
  const floors = new Map<string, number>();
  for (const line of markdown.split('\n')) {
    const row = /^\| (\d+)[^|]*\|([^|]*)\|/.exec(line);
    if (!row) continue;
    const floor = Number(row[1]);
    const folders = [...row[2]!.matchAll(/`([a-z-]+)\/`/g)].map((m) => m[1]!);
    if (floor === 0) floors.set('.', 0);
    else for (const folder of folders) floors.set(folder, floor);
  }
  return floors;
}

const floors = floorsFrom(readFileSync(join(repo, 'CONTRIBUTING.md'), 'utf8'));

/** Folders that decide without touching disk or processes (CONTRIBUTING.md, "The floors"). */
const PURE = ['loop', 'policy'];
const IO_MODULES =
  /^(node:)?(fs|fs\/promises|child_process|net|dgram|os|worker_threads|cluster|http|https|tty)$|^(execa|chokidar|pino)$/;

interface Edge {
  from: string;
  to: string;
  file: string;
  specifier: string;
}

function sourceFiles(dir: string, out: string[] = []): string[] {
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) sourceFiles(path, out);
    else if (/\.tsx?$/.test(name)) out.push(path);
  }
  return out;
}

function folderOf(path: string): string {
  const rel = relative(src, path);
  return rel.includes(sep) ? rel.split(sep)[0]! : '.';
}

/** Every import, export-from and dynamic import() of every file, type-only ones included. */
function imports(): { edges: Edge[]; external: { file: string; specifier: string }[] } {
  const edges: Edge[] = [];
  const external: { file: string; specifier: string }[] = [];
  for (const file of sourceFiles(src)) {
    const info = ts.preProcessFile(readFileSync(file, 'utf8'), true, true);
    for (const { fileName: specifier } of info.importedFiles) {
      if (!specifier.startsWith('.')) {
        external.push({ file: relative(src, file), specifier });
        continue;
      }
      const target = resolve(dirname(file), specifier);
      edges.push({ from: folderOf(file), to: folderOf(target), file: relative(src, file), specifier });
    }
  }
  return { edges, external };
}

/** Strongly connected folder groups of more than one folder (Tarjan). */
function cycles(edges: Edge[]): string[][] {
  const next = new Map<string, Set<string>>();
  for (const e of edges) if (e.from !== e.to) next.set(e.from, (next.get(e.from) ?? new Set()).add(e.to));
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const found: string[][] = [];
  const visit = (v: string) => {
    index.set(v, index.size);
    low.set(v, index.get(v)!);
    stack.push(v);
    for (const w of next.get(v) ?? []) {
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (stack.includes(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) === index.get(v)) {
      const group: string[] = [];
      let w: string;
      do {
        w = stack.pop()!;
        group.push(w);
      } while (w !== v);
      if (group.length > 1) found.push(group.sort());
    }
  };
  for (const v of next.keys()) if (!index.has(v)) visit(v);
  return found;
}

describe('import direction', () => {
  const { edges, external } = imports();

  it('reads the imports of every file in src/', () => {
    expect(edges.length).toBeGreaterThan(300);
    expect(edges.some((e) => e.specifier.startsWith('../../') || e.from !== e.to)).toBe(true);
  });

  it("places every folder of src/ on a floor of CONTRIBUTING.md's table, and only those", () => {
    const folders = [...new Set(sourceFiles(src).map(folderOf))].sort();
    // Fix: add a row to CONTRIBUTING.md's "The floors" and docs/architecture.md's "Folder map".
    expect([...floors.keys()].sort()).toEqual(folders);
  });

  it('imports only from lower floors, never its own or a higher one', () => {
    const notDown = edges
      .filter((e) => e.from !== e.to && (floors.get(e.to) ?? 0) >= (floors.get(e.from) ?? 0))
      .map(
        (e) => `${e.file} (floor ${floors.get(e.from)}) imports ${e.specifier} (${e.to}/, floor ${floors.get(e.to)})`,
      );
    // Fix: move the importing folder up a floor in CONTRIBUTING.md, or the shared code down.
    expect(notDown).toEqual([]);
  });

  it('has no cycles between folders', () => {
    const found = cycles(edges).map((group) => {
      const inside = edges.filter((e) => e.from !== e.to && group.includes(e.from) && group.includes(e.to));
      return `${group.join(' ⇄ ')}: ${inside.map((e) => `${e.file} → ${e.specifier}`).join(', ')}`;
    });
    expect(found).toEqual([]);
  });

  it('keeps loop/ and policy/ free of file, process and network modules', () => {
    const io = external.filter((x) => PURE.includes(x.file.split(sep)[0]!) && IO_MODULES.test(x.specifier));
    expect(io.map((x) => `${x.file} imports ${x.specifier}`)).toEqual([]);
  });
});

describe('the import checks themselves', () => {
  it('read floors from a table row, the files in src/ as floor 0', () => {
    const table = '| 2 (top) | `cli/`, `up/` | x |\n| 1 | `fleet/` | y |\n| 0 | files directly in `src/` | z |';
    expect([...floorsFrom(table)]).toEqual([
      ['cli', 2],
      ['up', 2],
      ['fleet', 1],
      ['.', 0],
    ]);
  });

  it('find a cycle and leave a one-way chain alone', () => {
    const edge = (from: string, to: string): Edge => ({ from, to, file: `${from}/x.ts`, specifier: `../${to}/y.js` });
    expect(cycles([edge('a', 'b'), edge('b', 'c'), edge('c', 'a'), edge('c', 'd')])).toEqual([['a', 'b', 'c']]);
    expect(cycles([edge('a', 'b'), edge('b', 'c'), edge('a', 'c')])).toEqual([]);
  });
});
