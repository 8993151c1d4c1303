import { realpathSync } from 'node:fs';
import { resolve, sep } from 'node:path';
import { readTrustedFolders } from '../../config/trust-store.js';

/**
 * Whether the folder a vendor CLI works in is one its person trusted (`flotilla trust`): a
 * trusted project or a folder inside one. Only then does the CLI get its own folder trust and
 * load the folder's own settings (hooks, MCP servers, helpers that run commands); otherwise
 * each runtime keeps them out (docs/security.md, "Vendor CLIs and folder trust").
 */
export function cliFolderTrusted(cwd: string, env: NodeJS.ProcessEnv): boolean {
  let dir: string;
  try { dir = realpathSync(cwd); } catch { dir = resolve(cwd); }
  return readTrustedFolders(env).some((f) => dir === f.project || dir.startsWith(f.project.endsWith(sep) ? f.project : f.project + sep));
}
