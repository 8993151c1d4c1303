// Bundles the CLI into dist/cli/main.js plus lazily loaded chunks, so that a call like
// `flotilla send` reads a few files instead of hundreds (§14 start-up budget). Heavy
// packages that only some commands need stay external and load from node_modules.
import { build } from 'esbuild';
import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';

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
await build({
  absWorkingDir: root,
  entryPoints: ['src/cli/main.ts'],
  outdir: 'dist/cli',
  chunkNames: '../chunks/[name]-[hash]',
  bundle: true,
  splitting: true,
  format: 'esm',
  platform: 'node',
  target: 'node20',
  sourcemap: true,
  logLevel: 'warning',
  plugins: [noEsprima],
  // Ink and React are bundled into the watch command's lazily loaded chunks: loading them from
  // node_modules read ~415 files and took ~400 ms before the dashboard's first frame (issue 15).
  // react-devtools-core is only imported by Ink when DEV=true and is not installed.
  external: ['ai', '@ai-sdk/*', '@modelcontextprotocol/sdk', '@modelcontextprotocol/sdk/*', 'execa', 'react-devtools-core', 'web-tree-sitter'],
  // React picks its production build by NODE_ENV at run time; the bundle fixes it (Ink renders the same).
  define: { 'process.env.NODE_ENV': '"production"' },
  // CommonJS dependencies (gray-matter) call require() for Node built-ins.
  banner: { js: "import { createRequire as __flotillaRequire } from 'node:module'; const require = __flotillaRequire(import.meta.url);" },
});
