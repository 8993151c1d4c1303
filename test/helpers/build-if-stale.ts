import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

/**
 * Vitest's global setup for the integration tier: builds the CLI when a source is newer than
 * dist/ (tools/build-if-stale.mjs, the same check `npm start` makes), so a single-file
 * `npx vitest run <file>` tests the code as it is, not the last build.
 */
export default function setup(): void {
  const script = fileURLToPath(new URL('../../tools/build-if-stale.mjs', import.meta.url));
  const r = spawnSync(process.execPath, [script], { stdio: 'inherit' });
  if (r.status !== 0)
    throw new Error(`the build failed (exit ${r.status ?? r.signal}): fix it, then run the tests again`);
}
