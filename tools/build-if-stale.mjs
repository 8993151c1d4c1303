// `npm start` builds only when a source is newer than the built CLI (a fresh clone has no
// dist/, so it builds; an unchanged checkout starts at once instead of rebuilding for ~30 s).
import { spawnSync } from 'node:child_process';
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const built = join(root, 'dist/cli/main.js');
const inputs = [
  'src',
  'demo',
  'package.json',
  'package-lock.json',
  'tsconfig.json',
  'tsconfig.build.json',
  'tools/build-cli.mjs',
];

function newest(path) {
  let st;
  try {
    st = statSync(path);
  } catch {
    return 0;
  }
  if (!st.isDirectory()) return st.mtimeMs;
  let max = st.mtimeMs;
  for (const name of readdirSync(path)) max = Math.max(max, newest(join(path, name)));
  return max;
}

let builtAt = 0;
try {
  builtAt = statSync(built).mtimeMs;
} catch {
  /* never built */
}
const sourcesAt = Math.max(...inputs.map((p) => newest(join(root, p))));
if (builtAt < sourcesAt) {
  process.stderr.write(
    builtAt ? 'flotilla: sources changed since the last build — building…\n' : 'flotilla: first run — building…\n',
  );
  const r = spawnSync('npm', ['run', 'build', '--silent'], { cwd: root, stdio: 'inherit' });
  process.exit(r.status ?? 1);
}
