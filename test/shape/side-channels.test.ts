import { readFileSync, readdirSync, statSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

/**
 * Modules talk through what they export and import, never through process-wide globals
 * (a `globalThis` property, a `Symbol.for` key): a reader follows imports, and a global hides
 * who writes it. A closer the CLI must run before exiting registers in src/at-exit.ts.
 */
const src = resolve(import.meta.dirname, '..', '..', 'src');

function sourceFiles(dir: string, out: string[] = []): string[] {
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) sourceFiles(path, out);
    else if (/\.tsx?$/.test(name)) out.push(path);
  }
  return out;
}

describe('no global side channels in src/', () => {
  it('no file reads or writes globalThis or keys by Symbol.for', () => {
    const found = sourceFiles(src).flatMap((file) =>
      readFileSync(file, 'utf8')
        .split('\n')
        .flatMap((line, i) =>
          /\bglobalThis\b|Symbol\.for\(/.test(line) ? [`${relative(src, file)}:${i + 1}: ${line.trim()}`] : [],
        ),
    );
    expect(found).toEqual([]);
  });
});
