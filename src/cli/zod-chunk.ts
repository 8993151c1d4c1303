import { join } from 'node:path';
import { requireCached } from './compile-cache.js';
import { chunkCacheLater } from '../start-done.js';

/**
 * zod in a fast bundle (§14): `dist/cli/zod.js` (tools/build-cli.mjs), loaded through its own code cache the first time
 * a module asks for it. The MCP SDK's chunk takes its zod from here too (cli/mcp-chunk.ts), so a vendor CLI's shim,
 * which serves the fleet tools with both, holds one zod: from node_modules ours was ~65 ms of CPU compiled on every
 * start, beside the SDK's own copy, and ~12 MB of the shim's memory.
 */
let chunk: ReturnType<typeof requireCached> | undefined;

/** A zod entry point's exports (`zod`, `zod/v4`, …), from the chunk (loaded on the first call). */
export function zodModule(name: string): unknown {
  if (!chunk) {
    const loaded = (chunk = requireCached(join(import.meta.dirname, 'zod.js')));
    chunkCacheLater(() => loaded.save());
  }
  const mod = (chunk.exports as Record<string, unknown>)[name];
  if (!mod) throw new Error(`${name} is not in dist/cli/zod.js: add it to tools/build-cli.mjs ZOD_MODULES`);
  return mod;
}

/** The command did not finish whole: the chunk's code cache is not written by this run (compile-cache.ts). */
export function zodCacheSkip(): void {
  chunk?.skip();
}
