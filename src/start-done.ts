/**
 * When a long-lived command's code cache is written (§14). A fast command's bundle is loaded
 * through V8's code cache, written by a run that did its whole command, when the process exits
 * (cli/compile-cache.ts). `flotilla run` does not end when its start is done: it is an agent's
 * harness, which lives as long as the agent and is often ended by a signal. Its run says
 * `cacheAtStart()` first, so the cache is not written at exit, and `startDone()` once the agent
 * has started (a vendor CLI launched, an in-process session started): the cache is written then,
 * holding everything the start compiled. A start that failed writes none. Outside a fast bundle
 * (the full CLI, tests) both do nothing. Each bundle has its own copy of this module: cli/fast.ts
 * gives it the hooks of the bundle it is in.
 */
export interface CacheHooks {
  /** Not at exit: the cache waits for `save`. */
  skip(): void;
  /** Written now (when it was missing or refused), and not again. */
  save(): void;
}

/**
 * The runtime of the agent a spawned harness runs (`flotilla run --spawned`), set by its spawner (spawn/launch.ts):
 * the harness's code cache is its runtime's (cli/start.ts), as a Claude shim and an in-process harness compile
 * different code.
 */
export const HARNESS_KIND_ENV = 'FLOTILLA_HARNESS_KIND';

let hooks: CacheHooks | undefined;

/** The hooks of the bundle this code runs in (cli/fast.ts). */
export function useCacheHooks(given: CacheHooks | undefined): void {
  hooks = given;
}

/** This command's code cache is written when its start is done, not when it exits. */
export function cacheAtStart(): void {
  hooks?.skip();
}

/** The start is done: what it compiled is written to the code cache now. */
export function startDone(): void {
  hooks?.save();
  hooks = undefined;
}

const chunkSaves: (() => void)[] = [];

/**
 * A chunk loaded after the start (zod's in a vendor CLI's shim, cli/chunk.ts) writes its code cache when
 * `chunksUsed()` says it has run through once, not at exit, which a shim ended by a signal never reaches.
 */
export function chunkCacheLater(save: () => void): void {
  chunkSaves.push(save);
}

/** What was loaded after the start has run through once: the chunks' code caches are written now. */
export function chunksUsed(): void {
  for (const save of chunkSaves.splice(0)) save();
}
