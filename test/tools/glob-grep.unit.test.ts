import { mkdirSync, utimesSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { tempDir } from '../helpers/fleet.js';
import { createGlobTool } from '../../src/tools/glob.js';
import { createGrepTool } from '../../src/tools/grep.js';
import { ctxFor } from './process-helpers.js';

let tmp: { dir: string; cleanup(): void };
beforeEach(() => {
  tmp = tempDir('flotilla-search-');
});
afterEach(() => tmp.cleanup());

/** Writes files with mtimes one minute apart, in the given order (last = newest). */
function tree(files: Record<string, string>): void {
  const base = Date.now() / 1000 - 3600;
  Object.entries(files).forEach(([rel, content], i) => {
    const path = join(tmp.dir, rel);
    mkdirSync(dirname(path), { recursive: true });
    writeFileSync(path, content);
    utimesSync(path, base + i * 60, base + i * 60);
  });
}

describe('glob', () => {
  it('lists matches newest first and skips node_modules and .git', async () => {
    tree({
      'src/old.ts': '',
      'src/lib/mid.ts': '',
      'src/new.ts': '',
      'src/readme.md': '',
      'node_modules/dep/index.ts': '',
      '.git/hooks/x.ts': '',
    });
    const r = await createGlobTool().execute({ pattern: '**/*.ts' }, ctxFor(tmp.dir));
    expect(r.output).toBe('src/new.ts\nsrc/lib/mid.ts\nsrc/old.ts');
  });

  it('says so when nothing matches', async () => {
    const r = await createGlobTool().execute({ pattern: '*.rs' }, ctxFor(tmp.dir));
    expect(r.output).toBe(`No files match *.rs under ${tmp.dir}.`);
    expect(r.isError).toBeUndefined();
  });

  it('caps the list with a hint', async () => {
    tree(Object.fromEntries(Array.from({ length: 30 }, (_, i) => [`f${String(i).padStart(2, '0')}.txt`, ''])));
    const r = await createGlobTool({ maxResults: 10 }).execute({ pattern: '*.txt' }, ctxFor(tmp.dir));
    const lines = r.output.split('\n');
    expect(lines.slice(0, 10)).toEqual(Array.from({ length: 10 }, (_, i) => `f${29 - i}.txt`));
    expect(r.output).toMatch(/\n\n\[Showing 10 of 30 matches, newest first\. Use a narrower pattern/);
  });

  it('accepts an absolute pattern', async () => {
    tree({ 'a/b.json': '', 'elsewhere/c.json': '' });
    const r = await createGlobTool().execute({ pattern: `${tmp.dir}/a/*.json` }, ctxFor(join(tmp.dir, 'elsewhere')));
    expect(r.output).toBe(join(tmp.dir, 'a/b.json'));
  });
});

describe('grep', () => {
  it('prints path:line:text for matches, sorted by path, skipping binary and ignored dirs', async () => {
    tree({
      'src/b.ts': 'const x = 1;\n// TODO: fix\n',
      'src/a.ts': 'todo lowercase\nTODO upper\n',
      'bin/data.bin': 'TODO\0binary',
      'node_modules/m/i.ts': 'TODO hidden',
    });
    const r = await createGrepTool().execute({ pattern: 'TODO' }, ctxFor(tmp.dir));
    expect(r.output).toBe('src/a.ts:2:TODO upper\nsrc/b.ts:2:// TODO: fix');
  });

  it('ignore_case, path and glob narrow the search', async () => {
    tree({ 'src/a.ts': 'Todo one\n', 'src/a.md': 'todo two\n', 'docs/c.ts': 'TODO three\n' });
    const r = await createGrepTool().execute(
      { pattern: 'todo', ignore_case: true, path: 'src', glob: '*.ts' },
      ctxFor(tmp.dir),
    );
    expect(r.output).toBe('src/a.ts:1:Todo one');
    const single = await createGrepTool().execute({ pattern: 'three', path: 'docs/c.ts' }, ctxFor(tmp.dir));
    expect(single.output).toBe('docs/c.ts:1:TODO three');
  });

  it('caps matches with a hint', async () => {
    tree({ 'many.txt': Array.from({ length: 50 }, (_, i) => `hit ${i + 1}`).join('\n') });
    const r = await createGrepTool({ maxMatches: 5 }).execute({ pattern: 'hit' }, ctxFor(tmp.dir));
    expect(r.output).toBe(
      'many.txt:1:hit 1\nmany.txt:2:hit 2\nmany.txt:3:hit 3\nmany.txt:4:hit 4\nmany.txt:5:hit 5\n\n' +
        '[Showing the first 5 of 50 matching lines. Narrow the search with path, glob or a more specific pattern to see the rest.]',
    );
  });

  it('skips files over the size cap and says so', async () => {
    tree({ 'big.log': `needle ${'x'.repeat(2000)}\n`, 'small.txt': 'needle\n' });
    const r = await createGrepTool({ maxFileBytes: 1000 }).execute({ pattern: 'needle' }, ctxFor(tmp.dir));
    expect(r.output).toBe('small.txt:1:needle\n\n[1 file over 1000 bytes skipped; search those with shell if needed.]');
  });

  it('an invalid regex is an error with the fix', async () => {
    const r = await createGrepTool().execute({ pattern: 'foo(' }, ctxFor(tmp.dir));
    expect(r.isError).toBe(true);
    expect(r.output).toMatch(
      /^pattern "foo\(" is not a valid JavaScript regular expression: .*Escape special characters/,
    );
  });

  it('reports no matches and a missing path', async () => {
    tree({ 'a.txt': 'nothing here\n' });
    expect((await createGrepTool().execute({ pattern: 'zzz' }, ctxFor(tmp.dir))).output).toBe(
      'No matches for "zzz" in 1 file.',
    );
    const missing = await createGrepTool().execute({ pattern: 'x', path: 'nope' }, ctxFor(tmp.dir));
    expect(missing.isError).toBe(true);
    expect(missing.output).toBe('path not found: nope. Omit path to search your working directory.');
  });
});
