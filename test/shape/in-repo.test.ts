import { readFileSync } from 'node:fs';
import { dirname, resolve, sep } from 'node:path';
import { glob } from 'tinyglobby';
import { describe, expect, it } from 'vitest';

const repo = resolve(import.meta.dirname, '..', '..');

// A relative path written in a test (`new URL('../…', import.meta.url)`, `join(__dirname, '../…')`).
const RELATIVE = /['"`]((?:\.\.\/)+[^'"`$]*)['"`]/g;

describe('tests read nothing outside the repository', () => {
  it('no relative path in test/ climbs above the repository root', async () => {
    const files = await glob(['test/**/*.ts', 'vitest*.ts'], { cwd: repo });
    expect(files.length).toBeGreaterThan(100);
    const outside = files.flatMap((file) => {
      const text = readFileSync(resolve(repo, file), 'utf8');
      return [...text.matchAll(RELATIVE)]
        .map((m) => m[1]!)
        .filter((rel) => {
          const at = resolve(dirname(resolve(repo, file)), rel);
          return at !== repo && !at.startsWith(repo + sep);
        })
        .map((rel) => `${file}: ${rel}`);
    });
    expect(outside).toEqual([]);
  });
});
