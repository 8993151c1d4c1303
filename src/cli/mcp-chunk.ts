import { join } from 'node:path';
import { requireCached } from './compile-cache.js';
import { chunkCacheLater } from '../start-done.js';
import { zodModule } from './zod-chunk.js';

/**
 * The MCP SDK in a fast bundle other than `flotilla mcp`'s (§13, §14): `dist/cli/mcp-sdk.js` (tools/build-cli.mjs),
 * loaded through its own code cache the first time a module asks for an SDK module: a vendor CLI's shim, which serves
 * its CLI the fleet tools, as the CLI starts (harness/door-send.ts). Any other command never reads it. The chunk's zod
 * is the bundle's own (cli/zod-chunk.ts): the build leaves its `zod/*` imports to the `require` given here.
 */
let chunk: ReturnType<typeof requireCached> | undefined;

/** An SDK module's exports, from the chunk (loaded on the first call). */
export function mcpSdkModule(name: string): unknown {
  if (!chunk) {
    const zod = (id: string): unknown => (id === 'zod' || id.startsWith('zod/') ? zodModule(id) : undefined);
    const loaded = (chunk = requireCached(join(import.meta.dirname, 'mcp-sdk.js'), undefined, undefined, zod));
    chunkCacheLater(() => loaded.save());
  }
  const mod = (chunk.exports as Record<string, unknown>)[name];
  if (!mod) throw new Error(`${name} is not in dist/cli/mcp-sdk.js: add it to tools/build-cli.mjs MCP_SDK_MODULES`);
  return mod;
}
