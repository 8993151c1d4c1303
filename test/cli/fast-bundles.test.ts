import { readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

/**
 * The fast commands (`send`, `status`, `watch`, `task`, `spawn`, `run`, …) run from bundles loaded
 * through V8's compile cache (src/cli/compile-cache.ts), where a dynamic `import()` left in the
 * bundle throws "A dynamic import callback was not specified" — the dashboard once could not
 * cancel an agent for that. esbuild inlines every dynamic import of our own modules, and the
 * build turns one of a package or a Node built-in (the AI SDK's providers, web-tree-sitter, which
 * `run` loads for an agent's model and shell gate) into a `require` (tools/build-cli.mjs).
 */
// An integration test: its global setup rebuilds dist/ first when a source is newer.
const dist = resolve(import.meta.dirname, '..', '..', 'dist', 'cli');

describe('fast bundles', () => {
  const bundles = readdirSync(dist).filter((f) => /^fast-.*\.js$/.test(f));

  it('exist (the build made them)', () => {
    expect(bundles.length).toBeGreaterThanOrEqual(4);
  });

  it('hold no dynamic import()', () => {
    const found = bundles.flatMap((f) =>
      readFileSync(join(dist, f), 'utf8')
        .split('\n')
        .flatMap((line, i) =>
          // A comment that mentions one (zod's, in `mcp`'s bundle, which takes its packages in) runs nothing.
          /\bimport\s*\(/.test(line) && !line.trimStart().startsWith('//')
            ? [`dist/cli/${f}:${i + 1}: ${line.trim().slice(0, 120)}`]
            : [],
        ),
    );
    expect(found).toEqual([]);
  });

  // zod compiled once into its code cache (src/cli/chunk.ts): from node_modules it was compiled on every start of a
  // vendor CLI's shim, which checks its fleet tools' input with it.
  it('take zod from its chunk: none from node_modules, no copy of their own', () => {
    const text = (f: string) => readFileSync(join(dist, f), 'utf8');
    expect(bundles.filter((f) => /\brequire\("zod[/"]/.test(text(f)))).toEqual([]);
    // zod's own error text, which only a copy of zod holds.
    expect(bundles.filter((f) => text(f).includes('Invalid input: expected'))).toEqual([]);
    expect(text('zod.js')).toContain('Invalid input: expected');
    expect(bundles.filter((f) => text(f).includes('zod.js'))).toEqual(
      expect.arrayContaining(['fast-run.js', 'fast-mcp.js']),
    );
  });
});
