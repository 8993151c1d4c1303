import { lstatSync, realpathSync } from 'node:fs';
import { dirname, join, resolve, sep } from 'node:path';
import { readTrustedFolders } from '../../config/trust-store.js';

/**
 * Whether the folder a vendor CLI works in is one its person trusted (`flotilla trust`): a
 * trusted project or a folder inside one. Only then does the CLI get its own folder trust and
 * load the folder's own settings (hooks, MCP servers, helpers that run commands); otherwise
 * each runtime keeps them out (docs/security-trust.md, "Vendor CLIs and folder trust").
 */
export function cliFolderTrusted(cwd: string, env: NodeJS.ProcessEnv): boolean {
  let dir: string;
  try {
    dir = realpathSync(cwd);
  } catch {
    dir = resolve(cwd);
  }
  return readTrustedFolders(env).some(
    (f) => dir === f.project || dir.startsWith(f.project.endsWith(sep) ? f.project : f.project + sep),
  );
}

/**
 * The folder settings a CLI would load by itself (`Runtime.folderSettings`) that exist in
 * the cwd or a parent of it, the person's home excepted (theirs, not a repository's): none of
 * these folders is trusted when the cwd is not, since trust covers every folder inside.
 */
export function untrustedFolderSettings(names: readonly string[] | undefined, cwd: string, home: string): string[] {
  const found: string[] = [];
  const own = resolve(home);
  for (let dir = resolve(cwd); ; dir = dirname(dir)) {
    if (dir !== own) for (const name of names ?? []) if (present(join(dir, name))) found.push(join(dir, name));
    if (dirname(dir) === dir) return found;
  }
}

/** There, even as a link: what a link names is what the CLI would read. */
function present(path: string): boolean {
  try {
    lstatSync(path);
    return true;
  } catch {
    return false;
  }
}
