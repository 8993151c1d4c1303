import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

// docs/security.md names, for each claim, the test that proves it. A renamed or deleted test
// would leave a claim resting on nothing, so every named path must exist and every test name
// quoted after a path ("test/x.test.ts 'what it checks'") must still be in that file.
const repo = join(import.meta.dirname, '..', '..');
// The security model is docs/security.md and its parts, docs/security-*.md.
const doc = readdirSync(join(repo, 'docs'))
  .filter((name) => /^security(-[\w-]+)?\.md$/.test(name))
  .map((name) => readFileSync(join(repo, 'docs', name), 'utf8'))
  .join('\n');

/** Every `test/...` path the text names, trailing punctuation dropped. */
export function namedPaths(text: string): string[] {
  return [...new Set([...text.matchAll(/\btest\/[\w./-]*[\w/]/g)].map((m) => m[0]))];
}

/** Every `test/<file> 'name'` pair: a path followed by a quoted test name. */
export function namedTests(text: string): { path: string; name: string }[] {
  return [...text.matchAll(/\b(test\/[\w./-]*\.ts)`? '([^'\n]+)'/g)].map((m) => ({ path: m[1]!, name: m[2]! }));
}

describe('docs/security.md names tests that exist', () => {
  it('every test/ path it names exists', () => {
    const paths = namedPaths(doc);
    expect(paths.length).toBeGreaterThan(40);
    expect(paths.filter((p) => !existsSync(join(repo, p)))).toEqual([]);
  });

  it('every quoted test name is still in the file it is named with', () => {
    const stale = namedTests(doc).filter(
      ({ path, name }) => !existsSync(join(repo, path)) || !readFileSync(join(repo, path), 'utf8').includes(name),
    );
    expect(stale).toEqual([]);
  });

  it('reads paths and quoted names as a writer puts them', () => {
    const text = "Tests: `test/a/b.test.ts` (x), test/c/ and (test: test/d.unit.test.ts 'refuses ~/.ssh').";
    expect(namedPaths(text)).toEqual(['test/a/b.test.ts', 'test/c/', 'test/d.unit.test.ts']);
    expect(namedTests(text)).toEqual([{ path: 'test/d.unit.test.ts', name: 'refuses ~/.ssh' }]);
  });
});
