import { join } from 'node:path';
import { requireCached } from './compile-cache.js';
import { chunkCacheLater } from '../start-done.js';

/**
 * zod in a fast bundle (§14): `dist/cli/zod.js` (tools/build-cli.mjs), loaded through its own code cache the first time
 * a module asks for it: a vendor CLI's shim, whose fleet tools check their input with it. From node_modules it was
 * ~65 ms of CPU compiled on every such start.
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
