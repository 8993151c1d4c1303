import { existsSync, watch, type FSWatcher } from 'node:fs';
import { join } from 'node:path';
import type { AgentRecord } from '../../fleet/record.js';
import type { Layout } from '../../layout/layout.js';
import { loadRuntime, type VendorRuntimeName } from '../../runtimes/index.js';

/** How long a hook waits for the fleet tools to be listed (within Claude's 60 s hook timeout). */
const TOOLS_LISTED_MS = 30_000;

/**
 * Whether `flotilla mcp` has listed the fleet tools to the agent's CLI: it writes `mcp-ready` in the
 * agent's runtime folder once it answered the CLI's first tools/list (mcp/server.ts). Noticed by
 * inotify (a look every 250 ms besides, should the watch fail), waiting up to `waitMs`.
 */
export function fleetToolsListed(runtimeDir: string, waitMs = TOOLS_LISTED_MS): Promise<boolean> {
  const file = join(runtimeDir, 'mcp-ready');
  if (existsSync(file)) return Promise.resolve(true);
  return new Promise((resolve) => {
    let watcher: FSWatcher | undefined;
    let ended = false;
    const end = (listed: boolean) => {
      if (ended) return;
      ended = true;
      clearTimeout(deadline);
      clearInterval(looks);
      watcher?.close();
      resolve(listed);
    };
    const look = () => {
      if (existsSync(file)) end(true);
    };
    const deadline = setTimeout(() => end(existsSync(file)), waitMs);
    const looks = setInterval(look, 250);
    try {
      watcher = watch(runtimeDir, look);
      watcher.on('error', () => undefined);
    } catch {
      /* the looks still see it */
    }
    // Written between the first look and the watch.
    look();
  });
}

/**
 * A new session's SessionStart hook (Runtime.firstTurnWaitsForMcp): answered once the fleet tools are listed and the
 * CLI has read them; at once for a resumed agent, whose task is typed once they are (cli-tend.ts), and for a runtime
 * that connects its MCP servers first.
 */
export async function fleetToolsTakenIn(layout: Layout, rec: AgentRecord): Promise<void> {
  const runtimeDir = layout.runtimeDir(rec.id);
  if (rec.resumedFrom || existsSync(join(runtimeDir, 'mcp-ready'))) return;
  const runtime = await loadRuntime(rec.runtime as VendorRuntimeName).catch(() => undefined);
  if (runtime?.firstTurnWaitsForMcp) await fleetToolsListed(runtimeDir);
}
