import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { tempDir } from '../helpers/fleet.js';
import { createReadTool } from '../../src/tools/read.js';
import { ctxFor } from './process-helpers.js';

let tmp: { dir: string; cleanup(): void };
beforeEach(() => {
  tmp = tempDir('flotilla-read-');
});
afterEach(() => tmp.cleanup());

const numbered = (n: number) => Array.from({ length: n }, (_, i) => `line ${i + 1}`).join('\n') + '\n';

describe('read', () => {
  it('shows a small file with line numbers and no hint', async () => {
    writeFileSync(join(tmp.dir, 'a.txt'), 'alpha\nbeta\n');
    const r = await createReadTool().execute({ path: 'a.txt' }, ctxFor(tmp.dir));
    expect(r.output).toBe('     1\talpha\n     2\tbeta');
    expect(r.isError).toBeUndefined();
  });

  it('defaults to 2000 lines and says how to see more', async () => {
    writeFileSync(join(tmp.dir, 'big.txt'), numbered(5000));
    const r = await createReadTool({ maxOutputBytes: 1_000_000 }).execute({ path: 'big.txt' }, ctxFor(tmp.dir));
    const lines = r.output.split('\n');
    expect(lines[0]).toBe('     1\tline 1');
    expect(lines[1999]).toBe('  2000\tline 2000');
    expect(r.output).not.toContain('line 2001');
    expect(r.output.endsWith('\n\n[Showing lines 1-2000 of 5000. Use offset=2001 to see more.]')).toBe(true);
  });

  it('honours offset and limit', async () => {
    writeFileSync(join(tmp.dir, 'big.txt'), numbered(5000));
    const r = await createReadTool().execute({ path: 'big.txt', offset: 2001, limit: 3 }, ctxFor(tmp.dir));
    expect(r.output).toBe(
      '  2001\tline 2001\n  2002\tline 2002\n  2003\tline 2003\n\n[Showing lines 2001-2003 of 5000. Use offset=2004 to see more.]',
    );
    const end = await createReadTool().execute({ path: 'big.txt', offset: 4999 }, ctxFor(tmp.dir));
    expect(end.output).toBe('  4999\tline 4999\n  5000\tline 5000');
  });

  it('an offset past the end is an error saying how long the file is', async () => {
    writeFileSync(join(tmp.dir, 'a.txt'), numbered(10));
    const r = await createReadTool().execute({ path: 'a.txt', offset: 11 }, ctxFor(tmp.dir));
    expect(r.isError).toBe(true);
    expect(r.output).toBe('offset 11 is past the end of a.txt, which has 10 lines. Use an offset from 1 to 10.');
  });

  it('stops at the byte cap and points to the next offset', async () => {
    writeFileSync(
      join(tmp.dir, 'wide.txt'),
      Array.from({ length: 100 }, (_, i) => `${i + 1} ${'x'.repeat(95)}`).join('\n'),
    );
    const r = await createReadTool({ maxOutputBytes: 1000 }).execute({ path: 'wide.txt' }, ctxFor(tmp.dir));
    expect(r.output).toContain('     9\t9 xxx');
    expect(r.output).not.toContain('    10\t');
    expect(r.output).toMatch(
      /\[Showing lines 1-9 of 100 \(output capped at 1000 bytes\)\. Use offset=10 to see more\.\]$/,
    );
  });

  it('cuts a very long line', async () => {
    writeFileSync(join(tmp.dir, 'min.js'), 'y'.repeat(5000));
    const r = await createReadTool({ maxLineChars: 100 }).execute({ path: 'min.js' }, ctxFor(tmp.dir));
    expect(r.output).toBe(
      `     1\t${'y'.repeat(100)}… [line cut: 4900 more characters; use shell, e.g. "cut -c1-200", to see it]`,
    );
  });

  it('refuses binary files', async () => {
    writeFileSync(join(tmp.dir, 'blob.bin'), Buffer.from([0x7f, 0x45, 0x4c, 0x46, 0, 1, 2, 3]));
    const r = await createReadTool().execute({ path: 'blob.bin' }, ctxFor(tmp.dir));
    expect(r.isError).toBe(true);
    expect(r.output).toMatch(/^blob\.bin looks like a binary file \(8 bytes, contains NUL bytes\)/);
  });

  it('a directory is an error suggesting glob', async () => {
    mkdirSync(join(tmp.dir, 'src'));
    const r = await createReadTool().execute({ path: 'src' }, ctxFor(tmp.dir));
    expect(r.isError).toBe(true);
    expect(r.output).toBe('src is a directory, not a file. List it with glob, e.g. {"pattern": "src/*"}.');
  });

  it('a missing file is an error suggesting glob', async () => {
    const r = await createReadTool().execute({ path: 'lib/nope.ts' }, ctxFor(tmp.dir));
    expect(r.isError).toBe(true);
    expect(r.output).toBe(
      'File not found: lib/nope.ts. Check the path, or find the file with glob, e.g. {"pattern": "**/nope.ts"}.',
    );
  });

  it('reads absolute paths and shows CRLF files without carriage returns', async () => {
    writeFileSync(join(tmp.dir, 'win.txt'), 'one\r\ntwo\r\n');
    const r = await createReadTool().execute({ path: join(tmp.dir, 'win.txt') }, ctxFor('/'));
    expect(r.output).toBe('     1\tone\n     2\ttwo');
  });
});
