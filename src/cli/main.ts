#!/usr/bin/env node
import { join } from 'node:path';
import { requireCached } from './compile-cache.js';

// tools/build-cli.mjs writes start.js's content hash here (its code cache's key); under vitest and in tsc's per-file
// output it is not defined, and the cache is keyed by the file's size and mtime.
declare const __FLOTILLA_START_ID__: string | undefined;

/**
 * The `flotilla` executable, kept to this: Node compiles an entry file from its source on every
 * call, ~1 ms of a `flotilla send` for the ~16 KB that routed commands here (§14). That code is
 * dist/cli/start.js (start.ts), read through V8's code cache like the fast bundles it loads
 * (compile-cache.ts). The full CLI is an ES module, imported from here: code that node:vm
 * compiled cannot `import()`.
 */
const start = requireCached(
  join(import.meta.dirname, 'start.js'),
  typeof __FLOTILLA_START_ID__ === 'string' ? __FLOTILLA_START_ID__ : undefined,
);
(start.exports as typeof import('./start.js')).run(process.argv, start.skip, () => import('./full.js'));
