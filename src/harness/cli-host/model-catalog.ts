import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, renameSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Layout } from '../../layout/layout.js';
import type { Runtime } from '../../runtimes/types.js';

/** What the fleet takes from a vendor CLI's own model catalogue (docs/runtimes.md, "Codex's model catalogue"). */
export interface FleetCatalog {
  /** Old model → its upgrade: the CLI is told the "meet the new model" dialog was seen. */
  upgrades: Record<string, string>;
  /** The catalogue the CLI is given instead of its own, with its own sub-agents off; undefined when it could not be made. */
  file?: string;
}

/**
 * Asks the CLI itself for its catalogue (`runtime.modelCatalog`), once per installed binary,
 * and keeps what the fleet needs of it in the fleet's index, keyed by the binary's identity:
 * a later spawn reads two files instead of starting the CLI. The catalogue file lives in the
 * fleet root, which every agent's sandbox can read. Anything unexpected (the command fails,
 * its output changed shape) gives no upgrades and no file: the agent then starts on the CLI's
 * own catalogue, and the shim says what that means (shim.ts).
 */
export async function fleetCatalog(
  layout: Layout,
  runtime: Runtime,
  bin: string,
  env: NodeJS.ProcessEnv,
  configDir: string,
): Promise<FleetCatalog> {
  const catalog = runtime.modelCatalog;
  if (!catalog) return { upgrades: {} };
  const index = join(layout.indexDir, `${runtime.name}-model-catalog.json`);
  const file = join(layout.indexDir, `${runtime.name}-models.json`);
  const key = binaryId(bin);
  try {
    const kept = JSON.parse(readFileSync(index, 'utf8')) as { key?: string; upgrades?: Record<string, string> };
    if (kept.key === key && kept.upgrades && existsSync(file)) return { upgrades: kept.upgrades, file };
  } catch {
    /* none yet, or unreadable: ask the CLI */
  }
  const stdout = await new Promise<string | undefined>((resolve) => {
    execFile(
      bin,
      catalog.argv,
      { env: { ...env, ...catalog.env(configDir) }, timeout: 30_000, maxBuffer: 64 * 1024 * 1024 },
      (err, out) => resolve(err ? undefined : out),
    );
  });
  const upgrades = stdout === undefined ? undefined : catalog.upgrades(stdout);
  const text = stdout === undefined ? undefined : catalog.forFleet(stdout);
  if (!upgrades || !text) return { upgrades: upgrades ?? {} };
  try {
    mkdirSync(layout.indexDir, { recursive: true });
    // The catalogue first: the index names a key only once its file is whole.
    replace(file, text);
    replace(index, JSON.stringify({ key, upgrades }) + '\n');
  } catch {
    return { upgrades }; // the next spawn asks again
  }
  return { upgrades, file };
}

function replace(path: string, text: string): void {
  const tmp = `${path}.${process.pid}.tmp`;
  writeFileSync(tmp, text);
  renameSync(tmp, path);
}

/** The binary as installed: a new version (or another install) is another catalogue. */
export function binaryId(bin: string): string {
  try {
    const st = statSync(bin, { bigint: true });
    return `${bin}:${st.ino}:${st.size}:${st.mtimeNs}`;
  } catch {
    return bin;
  }
}
