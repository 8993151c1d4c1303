import { accessSync, constants, statSync } from 'node:fs';
import { delimiter, join } from 'node:path';

/**
 * The first executable file called `name` in `path`'s folders, as `command -v` would print it, or null: looked for
 * here rather than by a sh of its own, a process less (§14). A folder of that name, or a file that cannot run, is
 * stepped over; an empty entry is not a folder searched.
 */
export function whichOnPath(name: string, path: string | undefined): string | null {
  for (const dir of (path ?? '').split(delimiter)) {
    if (!dir) continue;
    const file = join(dir, name);
    try {
      if (!statSync(file).isFile()) continue;
      accessSync(file, constants.X_OK);
      return file;
    } catch {
      // Not here, or not one that runs.
    }
  }
  return null;
}
