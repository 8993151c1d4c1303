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

  // One zod per process, compiled once into its code cache (src/cli/zod-chunk.ts): from node_modules it was compiled on
  // every start of a vendor CLI's shim, beside the MCP SDK's own copy.
  it('take zod from its chunk, as the MCP SDK chunk does: none from node_modules, no second copy', () => {
    const fromPackages = bundles
      .filter((f) => f !== 'fast-mcp.js' && /\brequire\("zod[/"]/.test(readFileSync(join(dist, f), 'utf8')))
      .map((f) => `dist/cli/${f}`);
    expect(fromPackages).toEqual([]);
    expect(bundles.filter((f) => readFileSync(join(dist, f), 'utf8').includes('zod.js'))).toContain('fast-run.js');
    const sdk = readFileSync(join(dist, 'mcp-sdk.js'), 'utf8');
    const sdkZod = [...new Set([...sdk.matchAll(/\brequire\("(zod[^"]*)"\)/g)].map((m) => m[1]))].sort();
    expect(sdkZod).toEqual(['zod/v3', 'zod/v4', 'zod/v4-mini']);
    // zod's own error text, which only a copy of zod holds.
    expect(sdk).not.toContain('Invalid input: expected');
    expect(readFileSync(join(dist, 'zod.js'), 'utf8')).toContain('Invalid input: expected');
  });
});
