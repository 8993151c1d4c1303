import type { Config } from '../config/schema.js';
import { FlotillaError } from '../errors.js';
import type { AgentRecord } from '../fleet/record.js';
import { subtreeRecords } from '../fleet/live.js';
import { listRecords, readRecord, resolveAgent } from '../fleet/registry.js';
import type { Layout } from '../layout/layout.js';
import type { FleetOps } from '../tools/fleet-agents.js';

/** Answers handed to a model are cut here; the whole answer stays in the output file. */
const MODEL_OUTPUT_CHARS = 20_000;

/**
 * The fleet tools' operations bound to one agent as parent (§6): the same functions the CLI
 * uses, with `rec` forced as the parent (no ancestry walk), listing and cancelling only its
 * own subtree.
 */
export function fleetOpsFor(layout: Layout, config: Config, rec: AgentRecord): FleetOps {
  // The parent's latest record: turns used so far bound the child's (§7 no escalation).
  const self = (): AgentRecord => readRecord(layout, rec.id) ?? rec;
  return {
    spawn: (req) => spawnAs(layout, config, req, self()),
    // Its own subtree, from the children index: the rest of the fleet's history is never read.
    list: () => Promise.resolve(subtreeRecords(layout, rec.id).map(row)),
    wait: (ids, opts) => waitAs(layout, config, ids, opts),
    async cancel(prefix) {
      const target = resolveAgent(layout, prefix);
      if (!isBelow(layout, target, rec.id)) {
        throw new FlotillaError(`'${target.id}' is not one of your agents — you may cancel only agents you spawned (and theirs); see list_agents`, { code: 'not-yours' });
      }
      const { cancelAgent } = await import('./cancel.js');
      return cancelAgent(layout, config, target, { by: rec.id });
    },
  };
}

/**
 * The same operations for a person (an MCP client outside any agent, §13): a spawn is a
 * root, and the whole fleet is theirs to list, wait for and cancel, as with `flotilla
 * status` / `wait` / `cancel` at a shell.
 */
export function personFleetOps(layout: Layout, config: Config): FleetOps {
  return {
    spawn: (req) => spawnAs(layout, config, req, null),
    list: () => Promise.resolve(listRecords(layout).map(row)),
    wait: (ids, opts) => waitAs(layout, config, ids, opts),
    async cancel(prefix) {
      const { cancelAgent } = await import('./cancel.js');
      return cancelAgent(layout, config, resolveAgent(layout, prefix), { by: 'human' });
    },
  };
}

/** A spawn by the tool's caller: `parent` null is a person's root spawn (no conversation to pass on). */
async function spawnAs(layout: Layout, config: Config, req: Parameters<FleetOps['spawn']>[0], parent: AgentRecord | null): Promise<{ id: string }> {
  const { spawnAgent } = await import('./spawn.js');
  try {
    const child = await spawnAgent(
      layout, config,
      { prompt: req.prompt, agent: req.agent, id: req.id, ...(parent ? { context: req.context } : {}), mode: 'interactive' },
      { parent, worktree: req.worktree },
    );
    return { id: child.id };
  } catch (err) {
    // The model reads the message; the bracketed line tells a program what kind of refusal.
    if (err instanceof FlotillaError && err.bracket) throw new FlotillaError(`${err.message} ${err.bracket}`, { code: err.code, bracket: err.bracket });
    throw err;
  }
}

async function waitAs(layout: Layout, config: Config, ids: string[], opts: Parameters<FleetOps['wait']>[1]): ReturnType<FleetOps['wait']> {
  const { waitForAgents } = await import('./wait.js');
  return waitForAgents(layout, config, ids, {
    any: opts.any, signal: opts.signal, maxOutputChars: MODEL_OUTPUT_CHARS, ...(opts.tasks ? { tasks: opts.tasks } : {}),
    ...(opts.timeoutSecs !== undefined ? { timeoutMs: opts.timeoutSecs * 1000 } : {}),
  });
}

function row(r: AgentRecord): Awaited<ReturnType<FleetOps['list']>>[number] {
  return { id: r.id, name: r.name, status: r.status, depth: r.depth, turns: r.turns, lastLine: r.lastLine };
}

/** Whether `target` is in `ancestorId`'s subtree: its parent chain, a few record reads. */
function isBelow(layout: Layout, target: AgentRecord, ancestorId: string): boolean {
  const seen = new Set<string>();
  for (let p = target.parentId; p !== null && !seen.has(p); p = readRecord(layout, p)?.parentId ?? null) {
    if (p === ancestorId) return true;
    seen.add(p);
  }
  return false;
}
