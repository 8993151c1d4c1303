import { mkdirSync } from 'node:fs';
import type { Config } from '../config/schema.js';
import { isTrusted } from '../config/trust-store.js';
import type { AgentRecord } from '../fleet/record.js';
import type { Layout } from '../layout/layout.js';
import { findRuntimeBinary } from '../runtimes/binary.js';
import { loadRuntime } from '../runtimes/index.js';
import { fleetCatalog } from '../runtimes/model-catalog.js';

/**
 * A vendor CLI's model catalogue (Codex's: runtimes/model-catalog.ts), asked for by the spawner
 * while tmux opens the window and the harness loads, instead of by the shim after: on a fleet's
 * first spawn of that CLI it was a CLI start on the path to the first model request
 * (docs/benchmarks-runtimes.md). The shim finds it kept, or waits for this answer; anything
 * that fails here is the shim's to ask again and report. Resolves, never rejects.
 */
export async function catalogAhead(
  layout: Layout,
  config: Config,
  rec: AgentRecord,
  env: NodeJS.ProcessEnv,
): Promise<void> {
  if (rec.runtime === 'flotilla') return;
  try {
    const runtime = await loadRuntime(rec.runtime);
    if (!runtime.modelCatalog) return;
    // Found as the shim finds it (harness/cli-host/cli-launch.ts): another binary is another key, asked again there.
    const bin = findRuntimeBinary(runtime, env, {
      command: config.runtimes[rec.runtime].command,
      project: layout.project,
      projectTrusted: isTrusted(layout, env),
    });
    if (!bin) return;
    const configDir = layout.runtimeDir(rec.id);
    mkdirSync(configDir, { recursive: true, mode: 0o700 });
    await fleetCatalog(layout, runtime, bin, env, configDir);
  } catch {
    // The shim asks again, and says what failed.
  }
}
