import { join } from 'node:path';
import { requireCached } from './compile-cache.js';
import { chunkCacheLater } from '../start-done.js';

/**
 * Packages a fast bundle reads from a chunk of their own (§14, §18), not compiled into each bundle: the NATS client
 * (`dist/cli/nats-client.js`, read the first time a bus module uses it, so a maildir command never does) and zod
 * (`dist/cli/zod.js`, which a vendor CLI's shim checks its fleet tools' input with). Each is loaded once per process
 * through its own code cache; tools/build-cli.mjs points every import of those packages here.
 */
const loaded = new Map<string, ReturnType<typeof requireCached>>();

// tools/build-cli.mjs writes each chunk's content hash here; undefined outside a fast bundle (which never loads one).
declare const __FLOTILLA_CHUNK_IDS__: Record<string, string> | undefined;

/**
 * Each chunk's build, by file: its code cache's key, and the name of the build's seed of it, which a home's first
 * shim reads instead of parsing the whole chunk (zod's 560 KB: ~25–40 ms of CPU as the CLI starts).
 */
const CHUNK_IDS: Record<string, string> = typeof __FLOTILLA_CHUNK_IDS__ === 'object' ? __FLOTILLA_CHUNK_IDS__ : {};

/** A package's exports, from the chunk `file` in dist/cli (loaded on its first call). */
export function chunkModule(file: string, name: string): unknown {
  let chunk = loaded.get(file);
  if (!chunk) {
    const made = requireCached(join(import.meta.dirname, file), CHUNK_IDS[file]);
    loaded.set(file, made);
    // A long-lived process (a vendor CLI's shim, often ended by a signal) writes its cache once used, not at exit.
    chunkCacheLater(() => made.save());
    chunk = made;
  }
  const mod = (chunk.exports as Record<string, unknown>)[name];
  if (!mod) throw new Error(`${name} is not in dist/cli/${file}: add it to its list in tools/build-cli.mjs`);
  return mod;
}

/** The command did not finish whole: no chunk's code cache is written by this run (compile-cache.ts). */
export function chunksSkip(): void {
  for (const chunk of loaded.values()) chunk.skip();
}
