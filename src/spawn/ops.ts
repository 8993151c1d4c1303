import type { Config } from '../config/schema.js';
import { FlotillaError } from '../errors.js';
import { isTerminal } from '../fleet/record-status.js';
import type { AgentRecord } from '../fleet/record.js';
import { subtreeRecords } from '../fleet/live.js';
import { isBelow } from '../fleet/lineage.js';
import { listRecords, readRecord, resolveAgent } from '../fleet/registry.js';
import type { Layout } from '../layout/layout.js';
import type { FleetOps } from '../tools/fleet-ops.js';

/** Answers handed to a model are cut here; the whole answer stays in the output file. */
const MODEL_OUTPUT_CHARS = 20_000;

/**
 * The fleet tools' operations bound to one agent as parent (§6): the same functions the CLI
 * uses, with `rec` forced as the parent (no ancestry walk), listing and cancelling only its
 * own subtree; a spawn takes `env` (default process.env) as the spawner's environment.
 */
export function fleetOpsFor(layout: Layout, config: Config, rec: AgentRecord, env?: NodeJS.ProcessEnv): FleetOps {
  // The parent's latest record: turns used so far bound the child's (§7 no escalation).
  const self = (): AgentRecord => readRecord(layout, rec.id) ?? rec;
  return {
    spawn: (req, signal) => spawnAs(layout, config, req, self(), signal, env),
    // Its own subtree, from the children index: the rest of the fleet's history is never read.
    // On a bus, its children on other hosts too (§17.7), from the fleet's records.
    async list() {
      const rows = subtreeRecords(layout, rec.id).map(row);
      if (config.fleet.bus === 'maildir') return rows;
      const { subtreeElsewhere } = await import('./far-ops.js');
      return [...rows, ...(await subtreeElsewhere(layout, config, rec, new Set(rows.map((r) => r.id))))];
    },
    async wait(ids, opts) {
      const far = await farOps(layout, config, ids);
      if (far) return far.ops.waitThere(far.agents, opts, MODEL_OUTPUT_CHARS);
      return waitAs(layout, config, ids, opts);
    },
    async cancel(prefix) {
      const far = await farOps(layout, config, [prefix]);
      if (far) return far.ops.cancelThere(layout, config, far.agents, rec.id);
      const target = resolveAgent(layout, prefix);
      if (!isBelow(layout, target, rec.id)) {
        throw new FlotillaError(
          `'${target.id}' is not one of your agents — you may cancel only agents you spawned (and theirs); see list_agents`,
          { code: 'not-yours' },
        );
      }
      const { cancelAgent } = await import('../lifecycle/cancel.js');
      return cancelAgent(layout, config, target, { by: rec.id });
    },
  };
}

/**
 * On a bus, the agents of another host that `ids` name and the operations there (§17.7); far-ops.ts loads only then.
 */
async function farOps(layout: Layout, config: Config, ids: readonly string[]) {
  if (config.fleet.bus === 'maildir') return undefined;
  const ops = await import('./far-ops.js');
  const agents = await ops.farAgents(layout, config, ids);
  return agents && { ops, agents };
}

/**
 * The same operations for a person (an MCP client outside any agent, §13): a spawn is a
 * root, and the whole fleet is theirs to list, wait for and cancel, as with `flotilla
 * status` / `wait` / `cancel` at a shell.
 */
export function personFleetOps(layout: Layout, config: Config): FleetOps {
  return {
    spawn: (req, signal) => spawnAs(layout, config, req, null, signal),
    list: () => Promise.resolve(listRecords(layout).map(row)),
    wait: (ids, opts) => waitAs(layout, config, ids, opts),
    async cancel(prefix) {
      const { cancelAgent } = await import('../lifecycle/cancel.js');
      return cancelAgent(layout, config, resolveAgent(layout, prefix), { by: 'human' });
    },
  };
}

/** A spawn by the tool's caller: `parent` null is a person's root spawn (no conversation to pass on). */
async function spawnAs(
  layout: Layout,
  config: Config,
  req: Parameters<FleetOps['spawn']>[0],
  parent: AgentRecord | null,
  signal: AbortSignal,
  env?: NodeJS.ProcessEnv,
): ReturnType<FleetOps['spawn']> {
  const { spawnAgent } = await import('./spawn.js');
  const max = config.limits.max_running;
  // The calling agent keeps its slot while its tool call waits, and so do the agents above it
  // that wait for it: when they hold every slot, a child in line would wait for its own
  // parent forever (docs/decisions.md "Running slots count work").
  const held = req.queue && parent ? slotsHeldAbove(layout, parent) : [];
  if (held.length >= max) {
    throw new FlotillaError(
      `spawn refused: every running slot (limits.max_running ${max}) is held by ${held.map((id) => `'${id}'`).join(', ')}, which ${held.length === 1 ? 'waits' : 'wait'} for this spawn, so a child in line could never start — raise limits.max_running to ${held.length + 1} or more`,
      { code: 'concurrency-limit', bracket: `[flotilla:concurrency-limit running=${held.length} max=${max}]` },
    );
  }
  let waited = false;
  try {
    const child = await spawnAgent(
      layout,
      config,
      {
        prompt: req.prompt,
        agent: req.agent,
        id: req.id,
        ...(parent ? { context: req.context } : {}),
        mode: 'interactive',
        ...(req.queue
          ? {
              queue: {
                signal,
                onWait: () => {
                  waited = true;
                },
              },
            }
          : {}),
      },
      { parent, worktree: req.worktree, ...(env ? { env } : {}) },
    );
    return { id: child.id, waited };
  } catch (caught) {
    let err = caught;
    // Its definition's host: names another machine: the tool opens it there, as the shell's spawn-agent would (§17.5).
    const { DefinitionElsewhere } = await import('./prepare.js');
    if (err instanceof DefinitionElsewhere) {
      try {
        return await (
          await import('./far-ops.js')
        ).spawnThere(config, err.host, { ...req, agent: err.definition }, parent, signal);
      } catch (there) {
        err = there;
      }
    }
    // The model reads the message; the bracketed line tells a program what kind of refusal.
    if (err instanceof FlotillaError && err.bracket)
      throw new FlotillaError(`${err.message} ${err.bracket}`, { code: err.code, bracket: err.bracket });
    throw err;
  }
}

async function waitAs(
  layout: Layout,
  config: Config,
  ids: string[],
  opts: Parameters<FleetOps['wait']>[1],
): ReturnType<FleetOps['wait']> {
  const { waitForAgents } = await import('../lifecycle/wait.js');
  return waitForAgents(layout, config, ids, {
    any: opts.any,
    signal: opts.signal,
    maxOutputChars: MODEL_OUTPUT_CHARS,
    ...(opts.tasks ? { tasks: opts.tasks } : {}),
    ...(opts.timeoutSecs !== undefined ? { timeoutMs: opts.timeoutSecs * 1000 } : {}),
  });
}

function row(r: AgentRecord): Awaited<ReturnType<FleetOps['list']>>[number] {
  return { id: r.id, name: r.name, status: r.status, depth: r.depth, turns: r.turns, lastLine: r.lastLine };
}

/** `agent` and its ancestors that hold a running slot now (their records say which). */
function slotsHeldAbove(layout: Layout, agent: AgentRecord): string[] {
  const out: string[] = [];
  const seen = new Set<string>();
  for (
    let r: AgentRecord | null = agent;
    r && !seen.has(r.id);
    r = r.parentId ? (readRecord(layout, r.parentId) ?? null) : null
  ) {
    seen.add(r.id);
    if (r.slot !== null && !isTerminal(r.status)) out.push(r.id);
  }
  return out;
}
