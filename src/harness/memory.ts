import { closeSync, mkdirSync, openSync, readSync, realpathSync, statSync } from 'node:fs';
import { join } from 'node:path';
import type { Layout } from '../layout/layout.js';
import { userPaths } from '../layout/layout.js';
import { scrubHarnessMarkers } from '../tools/scrub.js';

const MAX_BYTES = 256 * 1024;
const MAX_LINES = 200;

/** The memory directory of a scope (§10), created at spawn. */
export function memoryDir(
  layout: Layout,
  scope: 'user' | 'project' | 'local',
  name: string,
  env: NodeJS.ProcessEnv = process.env,
): string {
  const dir =
    scope === 'user'
      ? userPaths(env).memory(name)
      : scope === 'project'
        ? layout.projectMemory(name)
        : layout.localMemory(name);
  mkdirSync(dir, { recursive: true });
  return realpathSync(dir);
}

/**
 * The first 200 lines of MEMORY.md wrapped in <agent-memory> (tags inside escaped), with a
 * pointer to the rest; skipped (with a warning) when it resolves outside the dir, is larger
 * than 256 KiB or holds NUL bytes.
 */
export function readMemory(dir: string, warn: (msg: string) => void): string | undefined {
  const file = join(dir, 'MEMORY.md');
  let real: string;
  try {
    real = realpathSync(file);
  } catch {
    return undefined;
  }
  if (!real.startsWith(dir + '/')) {
    warn(`memory file ${file} resolves outside ${dir}; skipped`);
    return undefined;
  }
  const size = statSync(real).size;
  if (size > MAX_BYTES) {
    warn(`memory file ${file} is over 256 KiB; skipped — trim it`);
    return undefined;
  }
  const buf = Buffer.alloc(size);
  const fd = openSync(real, 'r');
  try {
    readSync(fd, buf, 0, size, 0);
  } finally {
    closeSync(fd);
  }
  if (buf.includes(0)) {
    warn(`memory file ${file} contains NUL bytes; skipped`);
    return undefined;
  }
  const lines = buf.toString('utf8').split('\n');
  const shown = lines.slice(0, MAX_LINES).join('\n');
  const framed = scrubHarnessMarkers(shown);
  const more =
    lines.length > MAX_LINES
      ? `\n(${lines.length - MAX_LINES} more lines: read ${file} with offset=${MAX_LINES + 1})`
      : '';
  return `Your memory directory is ${dir}; keep notes for future runs in ${file}.\n<agent-memory path="${file}">\n${framed}${more}\n</agent-memory>`;
}
