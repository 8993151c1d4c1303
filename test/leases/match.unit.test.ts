import { describe, expect, it } from 'vitest';
import { pathsOverlap } from '../../src/leases/match.js';

/** Which lease paths can name the same file (docs/design.md §16). */
describe('pathsOverlap', () => {
  it.each([
    ['src/a.ts', 'src/a.ts', true],
    ['src/a.ts', 'src/b.ts', false],
    ['src', 'src/a.ts', true],
    ['src/a.ts', 'src', true],
    ['src', 'srcx/a.ts', false],
    ['', 'anything/at/all', true],
    ['src/**/*.ts', 'src/deep/a.ts', true],
    ['src/**/*.ts', 'src/a.md', false],
    ['src/*.ts', 'docs/a.ts', false],
    ['docs/*.md', 'docs', true],
    ['.github/**', '.github/workflows/ci.yml', true],
    ['src/**', 'src/*.ts', true],
    ['docs/*', 'src/*', false],
    ['{src,lib}/x.ts', 'lib/x.ts', true],
  ])('%s vs %s → %s', (a, b, want) => {
    expect(pathsOverlap(a, b)).toBe(want);
    expect(pathsOverlap(b, a)).toBe(want);
  });
});
