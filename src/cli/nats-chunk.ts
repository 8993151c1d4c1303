import { join } from 'node:path';
import { requireCached } from './compile-cache.js';

/**
 * The NATS client in a fast bundle (§14, §18): not compiled into each bundle but its own,
 * `dist/cli/nats-client.js` (tools/build-cli.mjs), loaded through its own code cache the first
 * time a bus module asks for a `@nats-io/*` package. A maildir command never reads it, and a
 * nats:// one reads it once, whichever fast command it is: the build points every
 * `@nats-io/*` import of a fast bundle here.
 */
let client: ReturnType<typeof requireCached> | undefined;

/** A `@nats-io/*` package's exports, from the chunk (loaded on the first call). */
export function natsPackage(name: string): unknown {
  client ??= requireCached(join(import.meta.dirname, 'nats-client.js'));
  const pkg = (client.exports as Record<string, unknown>)[name];
  if (!pkg) throw new Error(`${name} is not in dist/cli/nats-client.js: add it to tools/build-cli.mjs NATS_PACKAGES`);
  return pkg;
}

/** The command did not finish whole: the chunk's code cache is not written by this run (compile-cache.ts). */
export function natsCacheSkip(): void {
  client?.skip();
}
