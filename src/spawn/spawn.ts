import { audit } from '../audit/audit.js';
import type { Config } from '../config/schema.js';
import { FlotillaError } from '../errors.js';
import type { AgentRecord } from '../fleet/record.js';
import type { RemoteLineage } from '../hosts/lineage.js';
import type { Layout } from '../layout/layout.js';
import { childSpawned } from '../lifecycle/supervise.js';
import { launchAgent, tmuxPreflight, type LaunchOptions } from './launch.js';
import { prepareSpawn, type SpawnRequest } from './prepare.js';
import { traceMark } from '../trace.js';

/**
 * One spawn, start to finish (§5): tmux present and new enough, then everything
 * `prepareSpawn` checks, then the child opened and holding its slot. The same function
 * serves `flotilla spawn` / `spawn-agent`, a model's `spawn_agent` and the pane's chat
 * commands.
 */

export interface SpawnOptions extends LaunchOptions {
  /** The calling process (lineage is walked from here); default process.pid. */
  pid?: number;
  /** Force the parent (a harness spawning for its own model or pane). */
  parent?: AgentRecord | null;
  /** A child of an agent on another host (§17.5), its lineage accepted by hosts/remote-child.ts. */
  lineage?: RemoteLineage;
}

export async function spawnAgent(
  layout: Layout,
  config: Config,
  req: Omit<SpawnRequest, 'background'>,
  opts: SpawnOptions = {},
): Promise<AgentRecord> {
  const env = opts.env ?? process.env;
  if (!opts.background) {
    try {
      await tmuxPreflight(config, env);
    } catch (err) {
      if (err instanceof FlotillaError)
        audit(layout, {
          event: 'spawn_refused',
          agent: opts.parent?.id ?? 'human',
          definition: req.agent ?? null,
          code: err.code,
          reason: err.message,
        });
      throw err;
    }
  }
  traceMark('spawn: tmux checked');
  const prepared = await prepareSpawn(
    layout,
    config,
    {
      ...req,
      background: opts.background || undefined,
      worktree: opts.worktree,
      mode: opts.background ? 'headless' : req.mode,
    },
    {
      env,
      ...(opts.pid !== undefined ? { pid: opts.pid } : {}),
      ...(opts.parent !== undefined ? { parent: opts.parent } : {}),
      ...(opts.lineage ? { lineage: opts.lineage } : {}),
    },
  );
  // A harness spawning for its model or pane watches its new child closely from now on.
  if (prepared.record.parentId && !opts.lineage) childSpawned(prepared.record.parentId);
  return launchAgent(layout, config, prepared, { ...opts, env });
}
