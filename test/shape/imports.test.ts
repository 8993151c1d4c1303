import { readFileSync, readdirSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

/**
 * Imports point one way (CONTRIBUTING.md, "The layers"; docs/architecture.md "Source map"): a folder may import
 * from its own layer or any lower one, never a higher one, and folders never form a cycle.
 * A new folder under src/ must be placed in LAYERS (and in docs/architecture.md) on purpose.
 */
const LAYERS: readonly (readonly string[])[] = [
  ['cli'],
  ['harness', 'watch', 'up', 'mcp', 'schedule'],
  ['spawn', 'lifecycle', 'outputs', 'work', 'team-store'],
  ['fleet', 'hosts', 'inbox', 'bus', 'tmux', 'transcript', 'tools', 'policy', 'model', 'loop', 'hooks', 'definitions', 'audit', 'secrets', 'runtimes', 'tasks', 'leases'],
  ['config', 'layout'],
  // Files directly in src/ (errors.ts): everyone may use them.
  ['.'],
];

/** Folders that decide without touching disk or processes (CONTRIBUTING.md, "The layers"). */
const PURE = ['loop', 'policy'];
const IO_MODULES = /^(node:)?(fs|fs\/promises|child_process|net|dgram|os|worker_threads|cluster|http|https|tty)$|^(execa|chokidar|pino)$/;

const src = resolve(import.meta.dirname, '..', '..', 'src');
const rank = new Map(LAYERS.flatMap((folders, i) => folders.map((f) => [f, LAYERS.length - i] as const)));

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

  it('places every folder of src/ in a layer', () => {
    const folders = [...new Set(sourceFiles(src).map(folderOf))];
    const unplaced = folders.filter((f) => !rank.has(f));
    // Fix: add the folder to LAYERS above and to the source map in docs/architecture.md.
    expect(unplaced).toEqual([]);
  });

  it('CONTRIBUTING.md\'s layer table lists every folder of src/, in its layer', () => {
    const text = readFileSync(resolve(src, '..', 'CONTRIBUTING.md'), 'utf8');
    const rows = text.split('\n').filter((l) => /^\| \d/.test(l)).map((l) => [...l.split('|')[2]!.matchAll(/`([a-z-]+)\/`/g)].map((m) => m[1]!).sort());
    // The last layer is the files directly in src/, named in the table by example.
    expect(rows.slice(0, LAYERS.length - 1)).toEqual(LAYERS.slice(0, -1).map((folders) => [...folders].sort()));
    expect(rows).toHaveLength(LAYERS.length);
  });

  it('never imports from a higher layer', () => {
    const upward = edges
      .filter((e) => (rank.get(e.to) ?? 0) > (rank.get(e.from) ?? 0))
      .map((e) => `${e.file} (${e.from}) imports ${e.specifier} (${e.to})`);
    expect(upward).toEqual([]);
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
  it('find a cycle and leave a one-way chain alone', () => {
    const edge = (from: string, to: string): Edge => ({ from, to, file: `${from}/x.ts`, specifier: `../${to}/y.js` });
    expect(cycles([edge('a', 'b'), edge('b', 'c'), edge('c', 'a'), edge('c', 'd')])).toEqual([['a', 'b', 'c']]);
    expect(cycles([edge('a', 'b'), edge('b', 'c'), edge('a', 'c')])).toEqual([]);
  });
});
