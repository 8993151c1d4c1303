import { spawnSync } from 'node:child_process';
import { CLI } from './cli.js';

/**
 * Trusts a test project's own files the way a person does (docs/security-trust.md "Folder
 * trust"): `flotilla trust <project>`, which writes the trust list into the user config dir
 * of `env`. That must be the test's own private XDG_CONFIG_HOME, never a person's.
 */
export function trustProject(project: string, env: Record<string, string>): void {
  if (!env.XDG_CONFIG_HOME || (!env.XDG_CONFIG_HOME.includes('flotilla') && !env.XDG_CONFIG_HOME.startsWith(project))) {
    throw new Error(`trustProject needs the test's own XDG_CONFIG_HOME, got ${env.XDG_CONFIG_HOME ?? 'none'}`);
  }
  const r = spawnSync(process.execPath, [CLI, 'trust', project], { cwd: project, env, encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`flotilla trust failed (${r.status}): ${r.stderr}`);
}
