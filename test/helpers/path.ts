import { existsSync, readdirSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { tempDir } from './fleet.js';

/**
 * A PATH holding every command of /usr/bin and /bin but `left` (a machine without those
 * tools; the machine running the tests may have a vendor CLI installed). Call `cleanup` after.
 */
export function pathWithout(left: readonly string[]): { path: string; cleanup: () => void } {
  const bin = tempDir('flotilla-bin-');
  for (const dir of ['/usr/bin', '/bin']) {
    if (!existsSync(dir)) continue;
    for (const name of readdirSync(dir)) {
      if (left.includes(name) || existsSync(join(bin.dir, name))) continue;
      symlinkSync(join(dir, name), join(bin.dir, name));
    }
  }
  return { path: bin.dir, cleanup: bin.cleanup };
}

/** The vendor CLIs' command names. */
export const VENDOR_CLIS = ['claude', 'codex', 'gemini'] as const;
