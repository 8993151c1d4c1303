import { execFile } from 'node:child_process';
import { mkdirSync, readFileSync, renameSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Layout } from '../../layout/layout.js';
import type { Runtime } from '../../runtimes/types.js';

/**
 * The model upgrades a vendor CLI's catalogue offers (docs/runtimes.md, "First-run answers"):
 * a CLI that would greet an older model with a "meet the new model" dialog learns it was
 * seen, so the agent runs the model it was given with nobody at the keyboard. Asked of the
 * CLI itself (`runtime.modelCatalog`), once per installed binary: kept in the fleet's index
 * keyed by the binary's identity, so a later spawn reads a file instead of starting the CLI.
 * Anything unexpected (the command fails, its output changed shape) gives no upgrades: the
 * agent then starts as before, and the mode tests show the dialog if it comes back.
 */
export async function modelUpgrades(layout: Layout, runtime: Runtime, bin: string, env: NodeJS.ProcessEnv, configDir: string): Promise<Record<string, string>> {
  const catalog = runtime.modelCatalog;
  if (!catalog) return {};
  const cache = join(layout.indexDir, `${runtime.name}-model-upgrades.json`);
  const key = binaryId(bin);
  try {
    const kept = JSON.parse(readFileSync(cache, 'utf8')) as { key?: string; upgrades?: Record<string, string> };
    if (kept.key === key && kept.upgrades) return kept.upgrades;
  } catch { /* none yet, or unreadable: ask the CLI */ }
  const stdout = await new Promise<string | undefined>((resolve) => {
    execFile(bin, catalog.argv, { env: { ...env, ...catalog.env(configDir) }, timeout: 30_000, maxBuffer: 16 * 1024 * 1024 }, (err, out) => resolve(err ? undefined : out));
  });
  const upgrades = stdout === undefined ? undefined : catalog.upgrades(stdout);
  if (!upgrades) return {};
  try {
    mkdirSync(layout.indexDir, { recursive: true });
    const tmp = `${cache}.${process.pid}.tmp`;
    writeFileSync(tmp, JSON.stringify({ key, upgrades }) + '\n');
    renameSync(tmp, cache);
  } catch { /* the next spawn asks again */ }
  return upgrades;
}

/** The binary as installed: a new version (or another install) is another catalogue. */
function binaryId(bin: string): string {
  try {
    const st = statSync(bin, { bigint: true });
    return `${bin}:${st.ino}:${st.size}:${st.mtimeNs}`;
  } catch {
    return bin;
  }
}
