import { mkdirSync, readdirSync, readFileSync, renameSync, statSync, unlinkSync, writeFileSync } from 'node:fs';
import { isAscii } from 'node:buffer';
import { basename, dirname, join } from 'node:path';
import { Script } from 'node:vm';
import { userCacheDir } from '../layout/layout.js';

/**
 * Loads a CommonJS bundle (the fast commands' own, main.ts) with V8's code cache, so that a
 * `flotilla send` does not compile its ~100 KB of JavaScript again on every call: compiling
 * was a quarter of what it cost above Node's own start (§14). Node 22 has this built in
 * (`module.enableCompileCache`); Node 20 does not.
 *
 * The cache is the code V8 compiled while running the bundle, written once when the process
 * exits, under `$XDG_CACHE_HOME/flotilla/v8` (default ~/.cache), readable only by its owner
 * and read-only inside an agent's sandbox (tools/sandbox.ts: it is code the host runs).
 * Its name holds the bundle's path, its build (`id`: a hash of its content, written into main.js
 * by tools/build-cli.mjs; without one, its size and mtime) and the Node version, so a rebuild or
 * another Node never reads an old one, and V8 itself refuses a cache that does not fit (then
 * the bundle compiles as usual and the cache is written again). Nothing depends on it: a
 * cache that cannot be read or written costs one compile. The id spares a `statSync`, whose
 * first call in a process was ~0.4 ms of every `flotilla send` (§14); dist/ is written only by
 * the build, so a bundle's content and its id change together (V8 checks the source's length).
 *
 * The cache holds what the run that wrote it compiled, and is kept while V8 takes it: a run
 * that failed, or handed its command line to the full CLI, compiled only part of what a
 * command runs, and every later call would compile the rest again. `skip()` says so: that
 * run writes nothing, and the next one does. A process that lives on once its start is done
 * (`flotilla run`, an agent's harness, often ended by a signal) writes it then instead:
 * `save()` writes it at once, when it was missing or refused, and never again (src/start-done.ts).
 */
export function requireCached(
  file: string,
  id?: string,
  kind?: string,
): { exports: unknown; skip(): void; save(): void } {
  const key = cacheFile(file, id, kind);
  let cachedData: Buffer | undefined;
  if (key) {
    try {
      cachedData = readFileSync(key.path);
    } catch {
      // No cache yet.
    }
  }
  // A home's first call (a new user, a container, a fresh agent's HOME) starts from the build's seed.
  let seeded = false;
  if (!cachedData && id) {
    try {
      cachedData = readFileSync(seedFile(file, id));
      seeded = true;
    } catch {
      // No seed for this Node (a build by another Node, or none): the bundle compiles.
    }
  }
  const script = new Script(wrappedSource(file), { filename: file, ...(cachedData ? { cachedData } : {}) });
  let skipped = false;
  let saved = false;
  const wanted = key && (!cachedData || seeded || script.cachedDataRejected) ? key : null;
  if (wanted) process.once('exit', () => skipped || save(wanted, script));
  const mod = { exports: {} };
  const fn = script.runInThisContext() as (...args: unknown[]) => void;
  fn.call(mod.exports, mod.exports, requireBeside(file), mod, file, dirname(file));
  return {
    exports: mod.exports,
    skip: () => {
      skipped = true;
    },
    save: () => {
      if (wanted && !saved) save(wanted, script);
      saved = skipped = true;
    },
  };
}

const HEAD = Buffer.from('(function (exports, require, module, __filename, __dirname) {');
const TAIL = Buffer.from('\n})');

/**
 * The bundle as the CommonJS function V8 compiles. The bundles are ASCII (tools/build-cli.mjs): decoded as Latin-1,
 * the source is one one-byte string, which Node keeps outside V8's heap. Read as UTF-8 and wrapped by concatenation,
 * an idle shim held ~2.7 MB more private memory (§14). Any other file is UTF-8, as before.
 */
function wrappedSource(file: string): string {
  const text = Buffer.concat([HEAD, readFileSync(file), TAIL]);
  return isAscii(text) ? text.toString('latin1') : text.toString('utf8');
}

/**
 * A `require` that resolves as `file`'s own would: in a CommonJS bundle beside it (main.js and
 * the fast bundles, all in dist/cli; tools/build-cli.mjs), the bundle's own; elsewhere one made
 * by node:module, whose load is ~0.3 ms of every `flotilla send` that needs none (§14).
 * Node's built-ins come from `process.getBuiltinModule`, the same objects: a `require('node:fs')`
 * also builds and refreshes the module's ES module facade (~0.1 ms the first time, µs each
 * after, and a bundle asks for node:fs and node:path once per module of ours).
 */
function requireBeside(file: string): NodeJS.Require {
  const own =
    typeof require === 'function' && typeof __dirname === 'string' && __dirname === dirname(file)
      ? require
      : process.getBuiltinModule('node:module').createRequire(file);
  const req = (id: string): unknown => (id.startsWith('node:') ? (process.getBuiltinModule(id) ?? own(id)) : own(id));
  return Object.assign(req, own) as NodeJS.Require;
}

/**
 * The build's seed of a bundle's code cache (tools/build-cli.mjs, `writeSeed`): beside the bundle, named by its build
 * and the Node that wrote it. It holds the code V8 compiles before running anything (the bundle's top level, not the
 * functions a run calls), which spares the whole-file parse: ~45 ms of the 1.8 MB harness bundle's ~50 on a home that
 * has no cache yet (§14). The home's own cache, written after the run as before, holds more and is read first.
 */
function seedFile(file: string, id: string): string {
  return join(dirname(file), 'v8', `${basename(file, '.js')}-${id}-${process.version}-${process.arch}.cache`);
}

/** Writes `file`'s seed (the build, once per bundle, with the Node that will run it). */
export function writeSeed(file: string, id: string): void {
  const script = new Script(wrappedSource(file), { filename: file });
  mkdirSync(join(dirname(file), 'v8'), { recursive: true });
  writeFileSync(seedFile(file, id), script.createCachedData());
}

interface CacheKey {
  dir: string;
  /** The start every cache of this bundle's path has, whatever its build. */
  prefix: string;
  path: string;
}

/** `kind`: a cache of its own, beside the bundle's others (a spawned harness's runtime, cli/start.ts). */
function cacheFile(file: string, id: string | undefined, kind?: string): CacheKey | null {
  let build = id;
  if (build === undefined) {
    try {
      const st = statSync(file);
      build = `${st.size}-${Math.trunc(st.mtimeMs)}`;
    } catch {
      return null;
    }
  }
  const dir = join(userCacheDir(), 'v8');
  const prefix = `${basename(file, '.js')}${kind ? `.${kind}` : ''}-${fnv1a(file)}-`;
  return {
    dir,
    prefix,
    path: join(dir, `${prefix}${build}-${process.version}-${process.arch}.cache`),
  };
}

/**
 * Writes the cache (temp name, then rename: readers see all of it or none) and drops older builds' caches of the same
 * bundle.
 */
function save(key: CacheKey, script: Script): void {
  try {
    mkdirSync(key.dir, { recursive: true, mode: 0o700 });
    const tmp = `${key.path}.${process.pid}.tmp`;
    writeFileSync(tmp, script.createCachedData(), { mode: 0o600 });
    renameSync(tmp, key.path);
    for (const name of readdirSync(key.dir)) {
      if (name.startsWith(key.prefix) && name.endsWith('.cache') && join(key.dir, name) !== key.path)
        unlinkSync(join(key.dir, name));
    }
  } catch {
    // A read-only home (a sandboxed agent's command): the next call compiles again.
  }
}

/** A short stable name for a path (FNV-1a, 32 bits): node:crypto would cost more than the cache saves. */
function fnv1a(text: string): string {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h.toString(36);
}
