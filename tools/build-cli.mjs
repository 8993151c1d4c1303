// Bundles the CLI into dist/cli/main.js plus lazily loaded chunks, so that a call like
// `flotilla send` reads a few files instead of hundreds (§14 start-up budget). Heavy
// packages that only some commands need stay external and load from node_modules.
import { build } from 'esbuild';
import { fileURLToPath } from 'node:url';

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
  external: ['ai', '@ai-sdk/*', 'ink', 'react', 'react/*', '@modelcontextprotocol/sdk', '@modelcontextprotocol/sdk/*', 'pino', 'chokidar', 'execa'],
  // CommonJS dependencies (gray-matter) call require() for Node built-ins.
  banner: { js: "import { createRequire as __flotillaRequire } from 'node:module'; const require = __flotillaRequire(import.meta.url);" },
});
