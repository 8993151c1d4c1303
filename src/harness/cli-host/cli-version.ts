import { mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Layout } from '../../layout/layout.js';
import { packagedVersion, runtimeVersion } from '../../runtimes/binary.js';
import type { Runtime } from '../../runtimes/types.js';
import { isTestedVersion, parseVersion, TESTED } from '../../versions.js';
import { binaryId } from '../../runtimes/model-catalog.js';

/**
 * The line a spawn prints in its pane when its CLI is not at the version Flotilla was tested
 * with (TESTED; docs/runtimes.md, "Which CLI runs"), else undefined. An npm-installed CLI's
 * version is read from its package.json; any other is asked of the CLI once per installed
 * binary and kept in the fleet's index, keyed by the binary's identity, so a later spawn
 * reads a file instead of starting the CLI twice. Either way the CLI's own start waits for no
 * second start of it.
 */
export async function untestedVersionNotice(
  layout: Layout,
  runtime: Pick<Runtime, 'name' | 'title' | 'npmPackage'>,
  bin: string,
  env: NodeJS.ProcessEnv,
): Promise<string | undefined> {
  const tested = TESTED[runtime.name];
  const version = packagedVersion(bin, runtime.npmPackage) ?? (await cliVersion(layout, runtime.name, bin, env));
  // A version we cannot read is not held against the CLI, as in doctor.
  if (version === undefined || parseVersion(version) === null || isTestedVersion(version, tested)) return undefined;
  return `${runtime.title} ${version} is not the version Flotilla was tested with (${tested}): a prompt it added may hold this agent — pin the tested one: npm install -g ${runtime.npmPackage}@${tested}`;
}

async function cliVersion(
  layout: Layout,
  name: string,
  bin: string,
  env: NodeJS.ProcessEnv,
): Promise<string | undefined> {
  const index = join(layout.indexDir, `${name}-version.json`);
  const key = binaryId(bin);
  try {
    const kept = JSON.parse(readFileSync(index, 'utf8')) as { key?: string; version?: string };
    if (kept.key === key && typeof kept.version === 'string') return kept.version;
  } catch {
    /* none yet, or unreadable: ask the CLI */
  }
  const version = await runtimeVersion(bin, env);
  if (version === undefined) return undefined; // asked again next time
  try {
    mkdirSync(layout.indexDir, { recursive: true });
    const tmp = `${index}.${process.pid}.tmp`;
    writeFileSync(tmp, JSON.stringify({ key, version }) + '\n');
    renameSync(tmp, index);
  } catch {
    /* the next spawn asks again */
  }
  return version;
}
