import { homedir } from 'node:os';
import { userPaths, type Layout } from '../layout/layout.js';
import { PACKAGE_ROOT } from '../layout/package.js';
import { hostExecutedPaths, installedPaths } from '../tools/sandbox.js';

/**
 * An agent's sandbox, by what the host runs (§11; tools/sandbox.ts): its home (from `env`),
 * Flotilla's install and Node, and every path that must stay read-only inside what it may
 * write because the host runs it later. The same for the harness's tool commands and a
 * vendor CLI.
 */
export function agentHostPaths(
  layout: Layout,
  cwd: string,
  env: NodeJS.ProcessEnv,
): { home: string; installed: string[]; readOnly: string[] } {
  const home = env.HOME ?? homedir();
  const user = userPaths(env);
  const installed = installedPaths(PACKAGE_ROOT, process.execPath);
  const readOnly = hostExecutedPaths({
    fleetRoot: layout.root,
    project: layout.project,
    cwd,
    home,
    userConfigDir: user.configDir,
    userCacheDir: user.cacheDir,
    installed,
  });
  return { home, installed, readOnly };
}
