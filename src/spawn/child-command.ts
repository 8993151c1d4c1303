import { join } from 'node:path';
import { AGENT_IDENTITY_VARS, agentEnvironment } from '../fleet/agent-env.js';
import type { AgentRecord } from '../fleet/record.js';
import type { Layout } from '../layout/layout.js';
import { CLI_ENTRY, TOOLS_DIR } from '../layout/package.js';
import { HARNESS_KIND_ENV } from '../start-done.js';
import { SHIM_HOST_PID_ENV } from './shim-host-process.js';

/**
 * The child's environment (§5): identity, the slot token, the same Node, PATH with
 * spawn-agent first, and the spawner's FLOTILLA_* settings (so config from the environment
 * means the same to the child, whose tmux server may have an older environment) — less
 * `hidden`, the keys the child gets through a file (spawn/harness-keys.ts): this environment
 * goes to tmux (`new-window -e`), where every pane of the server could read it. A shim host's pid is only ever
 * the spawn's own (spawn/shim-host-process.ts).
 */
export function childEnvironment(
  layout: Layout,
  rec: AgentRecord,
  slotEnv: string,
  env: NodeJS.ProcessEnv,
  hidden: readonly string[] = [],
): Record<string, string> {
  const out: Record<string, string> = {};
  const skip = new Set([...hidden, SHIM_HOST_PID_ENV]);
  for (const [k, v] of Object.entries(env)) {
    if (k.startsWith('FLOTILLA_') && !AGENT_IDENTITY_VARS.has(k) && !skip.has(k) && v !== undefined) out[k] = v;
  }
  if (env.XDG_CONFIG_HOME) out.XDG_CONFIG_HOME = env.XDG_CONFIG_HOME;
  return {
    ...out,
    ...agentEnvironment(layout, rec, env.PATH),
    FLOTILLA_SLOT: slotEnv,
    [HARNESS_KIND_ENV]: rec.runtime,
  };
}

/** The longest socket path Linux takes (sun_path, its NUL included). */
const SOCKET_PATH_MAX = 107;

/**
 * The child's argv: never a shell string. A vendor agent's is `tools/shim-pane`, its shim in the fleet's shim host
 * (shim-host/server.ts), unless the host's socket path is too long for one: then its own `run --spawned` harness.
 */
export function childArgv(layout: Layout, rec: Pick<AgentRecord, 'id' | 'runtime'>): string[] {
  if (inShimHost(layout, rec))
    return [join(TOOLS_DIR, 'shim-pane'), layout.shimHostSocket, process.execPath, CLI_ENTRY, rec.id];
  return [process.execPath, CLI_ENTRY, 'run', '--spawned', rec.id];
}

export function inShimHost(layout: Layout, rec: Pick<AgentRecord, 'runtime'>): boolean {
  return rec.runtime !== 'flotilla' && Buffer.byteLength(layout.shimHostSocket) <= SOCKET_PATH_MAX;
}
