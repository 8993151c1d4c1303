// Vendor runtimes (§13): runs bench/runtime-vendors.ts with vitest (it reuses the TypeScript
// test helpers: fake vendor APIs, vendor fleet; no network) and returns what it wrote.
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

export async function runRuntimeBench() {
  const root = fileURLToPath(new URL('..', import.meta.url));
  const r = spawnSync('npx', ['vitest', 'run', '--config', 'bench/vitest.runtime.config.ts'], { cwd: root, stdio: ['ignore', 'ignore', 'inherit'] });
  if (r.status !== 0) throw new Error(`runtime bench failed (exit ${r.status})`);
  return JSON.parse(readFileSync(new URL('./results/runtimes.json', import.meta.url), 'utf8'));
}
