// Bundles the CLI (§14 start-up budget) into
// - dist/cli/main.js, CommonJS: the entry, a few lines that load dist/cli/start.js (the router)
//   through V8's code cache, and dist/cli/fast-<name>.js, one CommonJS bundle per fast command
//   (src/cli/fast.ts), so that `flotilla send` reads three files of ours (and two caches) and
//   never starts Node's ES module loader; packages load from node_modules, only when needed,
//   but the NATS client, which is dist/cli/nats-client.js, read only by a command on a bus;
// - dist/cli/full.mjs plus lazily loaded chunks in dist/chunks/, ES modules: every other
//   command, loaded by main.js. Heavy packages that only some commands need stay external.
import { build, transform } from 'esbuild';
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join, relative } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

// gray-matter's js-yaml loads esprima (a JavaScript parser, ~25 ms of start-up) only for the
// `!!js/function` type, which Flotilla never reads: mail and definitions are untrusted YAML.
// Without esprima that type never matches, exactly as in js-yaml's browser build.
const noEsprima = {
  name: 'no-esprima',
  setup(b) {
    b.onLoad({ filter: /js-yaml[\\/]lib[\\/]js-yaml[\\/]type[\\/]js[\\/]function\.js$/ }, async (args) => {
      const text = await readFile(args.path, 'utf8');
      const out = text.replace("esprima = _require('esprima');", 'esprima = undefined;');
      if (out === text) throw new Error('build-cli: js-yaml changed; update the no-esprima plugin');
      return { contents: out, loader: 'js' };
    });
  },
};

const root = fileURLToPath(new URL('..', import.meta.url));
// The one version (src/versions.ts): package.json's, written into the bundles here.
const { version } = JSON.parse(await readFile(new URL('../package.json', import.meta.url), 'utf8'));
const define = { __FLOTILLA_VERSION__: JSON.stringify(version) };

// The fast path (src/cli/fast.ts) from each command's own `fast` flag (src/cli/spec.ts): the
// commands are loaded here, once, so main.js routes by a constant and loads none of them.
const { routes, leftOut } = await readFastRoutes();
define.__FLOTILLA_FAST_COMMANDS__ = JSON.stringify(routes);
// A build names its chunks by content hash: clear the last build's, or they pile up; and a
// fast command that is gone leaves no bundle behind.
await rm(new URL('../dist/chunks', import.meta.url), { recursive: true, force: true });
const cliOut = new URL('../dist/cli', import.meta.url);
for (const f of existsSync(cliOut) ? readdirSync(cliOut).filter((n) => n.startsWith('fast-')) : [])
  await rm(new URL(`../dist/cli/${f}`, import.meta.url));
await build({
  absWorkingDir: root,
  entryPoints: ['src/cli/full.ts'],
  outdir: 'dist/cli',
  outExtension: { '.js': '.mjs' },
  chunkNames: '../chunks/[name]-[hash]',
  bundle: true,
  splitting: true,
  format: 'esm',
  platform: 'node',
  target: 'node20',
  sourcemap: true,
  logLevel: 'warning',
  plugins: [noEsprima],
  define,
  external: ['ai', '@ai-sdk/*', 'execa', 'web-tree-sitter'],
  // CommonJS dependencies (gray-matter) call require() for Node built-ins.
  banner: {
    js: "import { createRequire as __flotillaRequire } from 'node:module'; const require = __flotillaRequire(import.meta.url);",
  },
});

// A fast command's entry: its module run by fastRun (src/cli/fast.ts), nothing else.
const fastEntry = {
  name: 'fast-entry',
  setup(b) {
    b.onResolve({ filter: /^fast-entry:/ }, (args) => ({
      path: args.path.slice('fast-entry:'.length),
      namespace: 'fast-entry',
    }));
    b.onLoad({ filter: /.*/, namespace: 'fast-entry' }, (args) => ({
      contents: `import * as command from './commands/${args.path}.js';\nimport { fastRun } from './fast.js';\nexport const run = (args, cache) => fastRun(command, args, cache);\n`,
      resolveDir: fileURLToPath(new URL('../src/cli', import.meta.url)),
      loader: 'ts',
    }));
  },
};

// What a fast command's spec leaves out of its bundle (`fastLeavesOut`, src/cli/spec.ts): each
// `import()` of such a module loads a stand-in that throws, and src/cli/fast.ts hands the command
// line to the full CLI.
function leaveOut(modules) {
  const src = fileURLToPath(new URL('../src/', import.meta.url));
  const met = new Map(modules.map((m) => [m, false]));
  return {
    name: 'leave-out',
    setup(b) {
      b.onResolve({ filter: /^\.\.?\// }, (args) => {
        const mod = relative(src, join(args.resolveDir, args.path).replace(/\.js$/, '.ts'));
        if (!met.has(mod)) return undefined;
        if (args.kind !== 'dynamic-import')
          return { errors: [{ text: `${mod} is left out of a fast bundle (fastLeavesOut) but imported statically` }] };
        met.set(mod, true);
        return { path: mod, namespace: 'left-out' };
      });
      // The error's code is the one src/cli/fast.ts looks for.
      b.onLoad({ filter: /.*/, namespace: 'left-out' }, (args) => ({
        contents: `const e = new Error('${args.path} is not in this fast bundle'); e.code = 'fast-bundle-left-out'; throw e;`,
        loader: 'js',
      }));
      b.onEnd(() => {
        const never = [...met].filter(([, m]) => !m).map(([k]) => k);
        if (never.length) throw new Error(`build-cli: fastLeavesOut names modules never imported: ${never.join(', ')}`);
      });
    },
  };
}

// Packages load from node_modules, but the NATS client's: on a `nats://` fleet the fast commands
// (`task`, `watch`, and a `status` that writes; one that only looks reads over src/bus/nats/wire.ts)
// load it, 68 files resolved and compiled one by one (~90 ms, more than the rest of `status`). It is
// bundled once, into dist/cli/nats-client.js with its own V8 code cache, and each fast bundle's
// `@nats-io/*` import asks src/cli/chunk.ts for it: read the first time a bus module uses the
// client, so a maildir command never reads it (compiled into every bundle, it was half of
// `status`'s code cache, 776 KB against 351 KB).
const NATS_PACKAGES = ['@nats-io/transport-node', '@nats-io/jetstream', '@nats-io/kv'];
// Bundled like our own code, so the code cache holds them, with the packages they import: picomatch, which the
// leases' modules import and `status` loads on every bus (7 files compiled from node_modules were ~6 ms of CPU); yaml,
// which reads the definitions before every vendor CLI starts (~40 files, ~25 ms of a shim's CPU before the CLI's exec);
// gray-matter, which reads mail (with js-yaml, less esprima: noEsprima; ~40 ms of a shim's CPU as its CLI starts).
const BUNDLED_IN_FAST = ['picomatch', 'yaml', 'gray-matter'];
// zod in every fast bundle: dist/cli/zod.js, loaded through its own code cache (src/cli/chunk.ts). From node_modules
// it was ~65 ms of CPU compiled on every start that loads it: a vendor CLI's shim (its fleet tools' schemas), a spawn
// whose definitions fail, a config the validator refuses.
const ZOD_MODULES = ['zod'];
// Each chunk of dist/cli: the package family it serves and the entry points it holds. A fast bundle's import of one
// asks src/cli/chunk.ts for it; one the list lacks fails the build.
const CHUNKS = [
  { file: 'nats-client.js', family: /^@nats-io\//, modules: NATS_PACKAGES },
  { file: 'zod.js', family: /^zod(\/|$)/, modules: ZOD_MODULES },
];
const packagesInChunks = {
  name: 'packages-in-chunks',
  setup(b) {
    b.onResolve({ filter: /^[^./]/ }, (args) => {
      if (args.path.startsWith('node:') || BUNDLED_IN_FAST.includes(args.path)) return undefined;
      const chunk = CHUNKS.find((c) => c.family.test(args.path));
      if (chunk && !chunk.modules.includes(args.path))
        return { errors: [{ text: `build-cli: ${args.path} is not in dist/cli/${chunk.file}'s list (CHUNKS)` }] };
      if (chunk) return { path: `${chunk.file}:${args.path}`, namespace: 'chunk' };
      if (/[\\/]node_modules[\\/]/.test(args.importer)) return undefined;
      return { path: args.path, external: true };
    });
    b.onLoad({ filter: /.*/, namespace: 'chunk' }, (args) => {
      const at = args.path.indexOf(':');
      const [file, name] = [args.path.slice(0, at), args.path.slice(at + 1)];
      return {
        contents: `module.exports = require('./chunk.ts').chunkModule(${JSON.stringify(file)}, ${JSON.stringify(name)});\n`,
        resolveDir: fileURLToPath(new URL('../src/cli', import.meta.url)),
        loader: 'js',
      };
    });
  },
};
// Within the chunk, two modules a plain connection never uses load on first use: node:tls (its
// `isEncrypted()` asks `instanceof TLSSocket`, which no socket is before node:tls loads) and
// tweetnacl (nkey signatures; 62 KB compiled from node_modules on every connect) — ~10 ms of CPU
// of every nats:// command. And nuid's random prefix comes from node:crypto's randomFillSync,
// which every command has loaded, not from `globalThis.crypto`, whose first touch loads Node's
// Web Crypto (~1 ms). And its one character outside ASCII (a `µs` in a regular expression) is written as an escape:
// with it the chunk was a two-byte string, twice its 240 KB, in every process on a bus (src/cli/compile-cache.ts).
// Each is an exact edit; the build fails when the client changed.
const NATS_EDITS = [
  {
    file: /@nats-io[\\/]transport-node[\\/]lib[\\/]node_transport\.js$/,
    from: 'const node_tls_1 = require("node:tls");',
    to: 'let tlsLoaded; const node_tls_1 = { get connect() { return (tlsLoaded ??= require("node:tls")).connect; }, get TLSSocket() { return tlsLoaded ? tlsLoaded.TLSSocket : class NotLoaded {}; } };',
  },
  {
    file: /@nats-io[\\/]nuid[\\/]lib[\\/]nuid\.js$/,
    from: 'if (globalThis?.crypto?.getRandomValues) {\n        globalThis.crypto.getRandomValues(a);\n    }\n    else {\n        _getRandomValues(a);\n    }',
    to: 'require("node:crypto").randomFillSync(a);',
  },
  {
    file: /@nats-io[\\/]jetstream[\\/]lib[\\/]jsclient\.js$/,
    from: 'const re = /(\\d+(?:\\.\\d+)?)(ns|us|µs|ms|s|m|h)/g;',
    to: 'const re = /(\\d+(?:\\.\\d+)?)(ns|us|\\u00b5s|ms|s|m|h)/g;',
  },
  {
    file: /@nats-io[\\/]nkeys[\\/]lib[\\/]nacl\.js$/,
    from: 'const tweetnacl_1 = __importDefault(require("tweetnacl"));\nexports.default = tweetnacl_1.default;',
    to: 'let nacl; Object.defineProperty(exports, "default", { get: () => (nacl ??= __importDefault(require("tweetnacl")).default) });',
  },
];
const natsEdits = {
  name: 'nats-edits',
  setup(b) {
    for (const { file, from, to } of NATS_EDITS)
      b.onLoad({ filter: file }, async (args) => {
        const text = await readFile(args.path, 'utf8');
        const out = text.replace(from, to);
        if (out === text) throw new Error(`build-cli: ${args.path} changed; update NATS_EDITS`);
        return { contents: out, loader: 'js' };
      });
  },
};
// The chunk itself: the three packages (and the NATS packages they import), tweetnacl, nothing else.
const natsOnly = {
  name: 'nats-only',
  setup(b) {
    b.onResolve({ filter: /^[^./]/ }, (args) =>
      args.path.startsWith('@nats-io/') || args.path.startsWith('node:') || args.path === 'tweetnacl'
        ? undefined
        : { path: args.path, external: true },
    );
  },
};

// A chunk's entry: `module.exports` maps each module it holds to its exports.
const chunkEntry = (name, modules) => ({
  name: `${name}-entry`,
  setup(b) {
    b.onResolve({ filter: new RegExp(`^${name}-entry$`) }, () => ({ path: name, namespace: `${name}-entry` }));
    b.onLoad({ filter: /.*/, namespace: `${name}-entry` }, () => ({
      contents: `module.exports = {\n${modules.map((p) => `  '${p}': require('${p}'),`).join('\n')}\n};\n`,
      resolveDir: root,
      loader: 'js',
    }));
  },
});
// main.ts loads the full CLI with import('./full.js'): at run time that is the ES module above.
const fullIsExternal = {
  name: 'full-is-external',
  setup(b) {
    b.onResolve({ filter: /^\.\/full\.js$/ }, () => ({ path: './full.mjs', external: true }));
  },
};
const cjs = {
  absWorkingDir: root,
  outdir: 'dist/cli',
  bundle: true,
  format: 'cjs',
  platform: 'node',
  target: 'node20',
  sourcemap: true,
  logLevel: 'warning',
  plugins: [fullIsExternal, fastEntry, packagesInChunks, noEsprima],
  // Modules find files relative to themselves; main.js sits at the same depth as their sources. The URL is made only
  // when asked for: pathToFileURL was ~0.2 ms of every fast command's start (§14).
  define: { ...define, 'import.meta.url': '__flotillaMeta.url', 'import.meta.dirname': '__dirname' },
  banner: {
    js: "const __flotillaMeta = { get url() { return require('node:url').pathToFileURL(__filename).href; } };",
  },
};
// The chunks first: each one's content hash goes into the fast bundles, the key of its code cache and of its seed
// (src/cli/chunk.ts), as the bundles' own go into start.js below.
await build({
  ...cjs,
  entryPoints: [{ in: 'nats-client-entry', out: 'nats-client' }],
  plugins: [chunkEntry('nats-client', NATS_PACKAGES), natsOnly, natsEdits],
  minify: true,
  define: {},
  banner: {},
});
await build({
  ...cjs,
  entryPoints: [{ in: 'zod-entry', out: 'zod' }],
  plugins: [chunkEntry('zod', ZOD_MODULES)],
  minify: true,
  define: {},
  banner: {},
});
await asciiOnly(new URL('../dist/cli/zod.js', import.meta.url));
await asciiOnly(new URL('../dist/cli/nats-client.js', import.meta.url));
const contentId = async (name) =>
  createHash('sha256')
    .update(await readFile(new URL(`../dist/cli/${name}`, import.meta.url)))
    .digest('hex')
    .slice(0, 16);
const chunkIds = Object.fromEntries(await Promise.all(CHUNKS.map(async (c) => [c.file, await contentId(c.file)])));
const fastCjs = {
  ...cjs,
  supported: { 'dynamic-import': false },
  define: { ...cjs.define, __FLOTILLA_CHUNK_IDS__: JSON.stringify(chunkIds) },
};
// Each its own bundle: `flotilla send` compiles only what sending needs. One per fast command:
// its own entry in src/cli/fast/ when it has one (task's subcommands), else fastRun over its
// module; a bundle that leaves modules out is built on its own.
// A package a fast bundle imports with `import()` (the AI SDK's providers, web-tree-sitter: what
// `flotilla run` loads for an agent's model and shell gate) is `require`d instead: code compiled
// by node:vm (src/cli/compile-cache.ts) cannot `import()`. Each has a CommonJS build; an ES-only
// package left as an `import()` fails test/cli/fast-bundles.test.ts.
const entries = fastEntries(routes);
const plain = entries.filter((e) => !leftOut[e.bundle]);
if (plain.length) await build({ ...fastCjs, entryPoints: plain.map(({ entry }) => entry) });
for (const { bundle, entry } of entries.filter((e) => leftOut[e.bundle]))
  await build({ ...fastCjs, entryPoints: [entry], plugins: [...cjs.plugins, leaveOut(leftOut[bundle])] });
for (const { bundle } of entries) await asciiOnly(new URL(`../dist/cli/fast-${bundle}.js`, import.meta.url));
// Then start.js, which routes commands, with each fast bundle's content hash: the key of its code
// cache, so that it need not `stat` a bundle to tell one build from another (src/cli/compile-cache.ts,
// §14); and main.js, the entry, with start.js's.
const bundleIds = {};
for (const { bundle } of entries) bundleIds[bundle] = await contentId(`fast-${bundle}.js`);
await build({
  ...cjs,
  entryPoints: [{ in: 'src/cli/start.ts', out: 'start' }],
  define: { ...cjs.define, __FLOTILLA_BUNDLE_IDS__: JSON.stringify(bundleIds) },
});
await build({
  ...cjs,
  entryPoints: [{ in: 'src/cli/main.ts', out: 'main' }],
  define: { ...cjs.define, __FLOTILLA_START_ID__: JSON.stringify(await contentId('start.js')) },
});
// dist/cli/main.js is CommonJS in an ES module package: this folder says so to Node.
await mkdir(new URL('../dist/cli', import.meta.url), { recursive: true });
await writeFile(new URL('../dist/cli/package.json', import.meta.url), JSON.stringify({ type: 'commonjs' }) + '\n');
await writeSeeds({
  start: await contentId('start.js'),
  ...Object.fromEntries(entries.map((e) => [`fast-${e.bundle}`, bundleIds[e.bundle]])),
  ...Object.fromEntries(CHUNKS.map((c) => [c.file.replace(/\.js$/, ''), chunkIds[c.file]])),
});

/**
 * Each bundle's code cache seed, by this Node (src/cli/compile-cache.ts `writeSeed`): a home's first `flotilla` call
 * reads it instead of parsing the whole bundle. compile-cache.ts is bundled here for the call (withSource): dist/cli's
 * own copy is tsc's ES module in a CommonJS folder.
 */
async function writeSeeds(ids) {
  await rm(new URL('../dist/cli/v8', import.meta.url), { recursive: true, force: true });
  await withSource('src/cli/compile-cache.ts', ({ writeSeed }) => {
    for (const [name, id] of Object.entries(ids))
      writeSeed(fileURLToPath(new URL(`../dist/cli/${name}.js`, import.meta.url)), id);
  });
}

/** Runs `use` with a module of src/ bundled for this build (its packages left to node_modules), then drops the bundle. */
async function withSource(entry, use) {
  const out = new URL(`../dist/.${entry.replace(/\W/g, '-')}.mjs`, import.meta.url);
  await build({
    absWorkingDir: root,
    entryPoints: [entry],
    outfile: fileURLToPath(out),
    bundle: true,
    format: 'esm',
    platform: 'node',
    target: 'node20',
    logLevel: 'warning',
    packages: 'external',
    define,
  });
  try {
    return await use(await import(pathToFileURL(fileURLToPath(out)).href));
  } finally {
    await rm(out, { force: true });
  }
}

/**
 * A bundle in ASCII only. esbuild escapes every other character but in the comments it keeps, and one such character
 * makes V8 hold the whole bundle as a two-byte string (src/cli/compile-cache.ts), twice its size in every process that
 * loads it (2.8 MB more of a vendor agent's shim). Each is replaced by as many `?` as its UTF-16 length, so the source
 * map's columns still hold; the build fails if that changed anything but comments.
 */
async function asciiOnly(url) {
  const text = await readFile(url, 'utf8');
  const ascii = text.replace(/[^\x00-\x7f]/g, '?');
  if (ascii === text) return;
  const code = async (js) => (await transform(js, { minifyWhitespace: true, legalComments: 'none' })).code;
  if ((await code(ascii)) !== (await code(text)))
    throw new Error(`build-cli: ${fileURLToPath(url)} has characters outside ASCII beyond its comments`);
  await writeFile(url, ascii);
}

/**
 * Each command's `fast` flag and `fastLeavesOut`, read by loading the command registry (src/cli/registry.ts
 * fastRoutes).
 */
async function readFastRoutes() {
  return withSource('src/cli/registry.ts', async (registry) => {
    const leftOut = {};
    for (const load of Object.values(registry.COMMANDS)) {
      const { spec } = await load();
      if (spec?.fast && spec.fastLeavesOut) leftOut[spec.name] = spec.fastLeavesOut;
    }
    return { routes: await registry.fastRoutes(), leftOut };
  });
}

/** The bundles' entry points: src/cli/fast/<bundle>.ts, or fastRun over the command's module (fastEntry). */
function fastEntries(routes) {
  const registry = readFileSync(new URL('../src/cli/registry.ts', import.meta.url), 'utf8');
  return [...new Set(Object.values(routes))].map((bundle) => {
    if (existsSync(new URL(`../src/cli/fast/${bundle}.ts`, import.meta.url)))
      return { bundle, entry: { in: `src/cli/fast/${bundle}.ts`, out: `fast-${bundle}` } };
    const m = new RegExp(`^\\s*'?${bundle}'?: \\(\\) => import\\('\\./commands/([\\w-]+)\\.js'\\)`, 'm').exec(registry);
    if (!m) throw new Error(`build-cli: the fast command '${bundle}' has no line in src/cli/registry.ts`);
    return { bundle, entry: { in: `fast-entry:${m[1]}`, out: `fast-${bundle}` } };
  });
}
