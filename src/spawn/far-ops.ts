import type { Config } from '../config/schema.js';
import { FlotillaError } from '../errors.js';
import type { AgentRecord } from '../fleet/record.js';
import type { RecordsBus } from '../bus/types.js';
import { descendsFrom, type Elsewhere } from '../hosts/elsewhere.js';
import type { Layout } from '../layout/layout.js';
import type { AgentSummary, FleetOps, WaitResult } from '../tools/fleet-ops.js';

/**
 * The fleet tools on agents another host runs (design §17.7), for an agent whose children
 * live there: the same `flotilla wait` and `cancel` a person's command runs on that host
 * through its `hosts:` entry, so the model's tools reach as far as its shell does. Loaded only
 * when a tool names an id this host does not know, on a `nats://` bus, or spawns a definition
 * whose `host:` is another machine.
 */

/** What the fleet tools' spawn asks of another host: the options `flotilla spawn` takes there. */
export type FarSpawnRequest = Pick<
  Parameters<FleetOps['spawn']>[0],
  'prompt' | 'agent' | 'id' | 'worktree' | 'context' | 'queue'
>;

/**
 * spawn_agent for a definition whose `host:` names another machine (§17.5): the same spawn as
 * `spawn-agent --agent NAME` from the agent's shell — `flotilla spawn --lineage` on that host
 * through its one ssh line, the prompt on stdin, admitted there against the fleet-wide caps
 * and budget — with the id it prints returned to the model. `parent` null is a person's (an
 * MCP client's): a root of that host's fleet, as a person's `spawn-agent --host` opens.
 */
export async function spawnThere(
  config: Config,
  hostName: string,
  req: FarSpawnRequest,
  parent: AgentRecord | null,
  signal: AbortSignal,
): Promise<{ id: string; waited: boolean }> {
  const [{ hostNamed }, { childLineage, remoteSpawnArgs }, { runRemoteFlotilla }] = await Promise.all([
    import('../hosts/hosts.js'),
    import('../hosts/remote-spawn.js'),
    import('../hosts/ssh.js'),
  ]);
  const host = hostNamed(config, hostName);
  if (req.context && req.context !== 'none') {
    throw new FlotillaError(
      `spawn refused: definition '${req.agent}' opens on host '${hostName}' (its host:), and context needs your conversation, which stays on this host — leave context out and put what the child needs in its prompt`,
      { code: 'host-context' },
    );
  }
  const lineage = parent ? childLineage(config, hostName, parent) : undefined;
  const args = remoteSpawnArgs({ agent: req.agent, id: req.id, worktree: req.worktree, queue: req.queue }, lineage);
  const r = await runRemoteFlotilla(host, args, { input: req.prompt, signal });
  const id = r.stdout.trim().split('\n').pop() ?? '';
  if (r.exitCode !== 0 || !id) throw refusedThere(host.name, r.stderr, r.exitCode);
  // `--queue` says on stderr when it started waiting in line (src/cli/commands/spawn.ts).
  return { id, waited: /waiting for a slot/.test(r.stderr) };
}

/** The other host's refusal as one error: its message, and its bracketed line kept for the model to read. */
function refusedThere(host: string, stderr: string, exitCode: number): FlotillaError {
  const lines = stderr.trim().split('\n').filter(Boolean);
  const bracket = lines.find((l) => l.startsWith('[flotilla:'));
  const message =
    lines
      .filter((l) => l !== bracket)
      .map((l) => l.replace(/^flotilla: /, ''))
      .join(' ') || `flotilla spawn ended with exit ${exitCode}`;
  const code = bracket
    ? (/^\[flotilla:([a-z0-9-]+)/.exec(bracket)?.[1] ?? 'host-command-failed')
    : 'host-command-failed';
  return new FlotillaError(`on host '${host}': ${message}`, { code, ...(bracket ? { bracket } : {}) });
}

/** The agents of another host that `ids` name, or undefined when every one is this host's. */
export async function farAgents(
  layout: Layout,
  config: Config,
  ids: readonly string[],
): Promise<Elsewhere | undefined> {
  const { agentsElsewhere } = await import('../hosts/elsewhere.js');
  return agentsElsewhere(layout, config, ids, () => fleetRecords(layout, config));
}

async function fleetRecords(layout: Layout, config: Config): Promise<RecordsBus> {
  return (await import('../bus/open.js')).busFor(layout, config).records;
}

/** wait_for_agents there: `flotilla wait --json` on their host, each answer cut to `maxChars` here. */
export async function waitThere(
  far: Elsewhere,
  opts: Parameters<FleetOps['wait']>[1],
  maxChars: number,
): ReturnType<FleetOps['wait']> {
  // Agents the fleet marked lost (§17.8) are answered here: their host is the one that cannot answer.
  if (far.records.every((r) => r.status === 'lost')) return { results: far.records.map(lostResult), pending: [] };
  const { runRemoteFlotilla } = await import('../hosts/ssh.js');
  const args = [
    'wait',
    ...far.records.map((r) => r.id),
    '--json',
    ...(opts.any ? ['--any'] : []),
    ...(opts.timeoutSecs !== undefined ? ['--timeout', String(opts.timeoutSecs)] : []),
  ];
  const r = await runRemoteFlotilla(far.host, args, { signal: opts.signal });
  let out: { results: WaitResult[]; pending: string[] };
  try {
    out = JSON.parse(r.stdout) as typeof out;
  } catch {
    throw new FlotillaError(
      `wait on host '${far.host.name}' failed: ${(r.stderr.trim() || `exit ${r.exitCode}`).split('\n').pop()}`,
      { code: 'host-command-failed' },
    );
  }
  const cut = (x: WaitResult): WaitResult =>
    x.output.length > maxChars
      ? {
          ...x,
          output: x.output.slice(0, maxChars) + `\n… (cut; the whole answer is in ${x.outputPath} on ${far.host.name})`,
        }
      : x;
  return { results: out.results.map(cut), pending: out.pending };
}

/** How a lost agent's task ended, as `flotilla wait` gives it: no answer, the reason its host went silent. */
export function lostResult(r: AgentRecord): WaitResult {
  return {
    id: r.id,
    task: r.lastTask?.task ?? null,
    status: r.status,
    exitReason: r.exitReason,
    outputPath: null,
    output: '',
  };
}

/**
 * cancel_agent there, once `by` may: the target must be in its own subtree, parents followed through the fleet's
 * records.
 */
export async function cancelThere(
  layout: Layout,
  config: Config,
  far: Elsewhere,
  by: string,
): Promise<{ cancelled: string[]; notes: string[] }> {
  const target = far.records[0]!;
  if (!(await descendsFrom(await fleetRecords(layout, config), target, by)) || target.id === by) {
    throw new FlotillaError(
      `'${target.id}' is not one of your agents — you may cancel only agents you spawned (and theirs); see list_agents`,
      { code: 'not-yours' },
    );
  }
  const { runRemoteFlotilla } = await import('../hosts/ssh.js');
  const r = await runRemoteFlotilla(far.host, ['cancel', target.id, '--json']);
  if (r.exitCode !== 0)
    throw new FlotillaError(
      `cancel on host '${far.host.name}' failed: ${(r.stderr.trim() || `exit ${r.exitCode}`).split('\n').pop()}`,
      { code: 'host-command-failed' },
    );
  return { cancelled: (JSON.parse(r.stdout) as { cancelled: string[] }).cancelled, notes: [] };
}

/**
 * list_agents's rows of the agent's subtree on other hosts (§18): the tree's records on the
 * bus (its live keys and the ended agents its kept usage names, RecordsBus.tree), and this
 * host's children of those (the children index) — never the fleet's whole history. A bus
 * that cannot answer shows this host's rows alone, as status does.
 */
export async function subtreeElsewhere(
  layout: Layout,
  config: Config,
  rec: AgentRecord,
  here: ReadonlySet<string>,
): Promise<AgentSummary[]> {
  const records = await fleetRecords(layout, config);
  let tree: Awaited<ReturnType<RecordsBus['tree']>>;
  try {
    tree = await records.tree(rec.rootId);
  } catch {
    return [];
  }
  const ended = await Promise.all(
    [...tree.ended.keys()].filter((id) => !tree.live.some((r) => r.id === id)).map((id) => records.get(id)),
  );
  const far = [...tree.live, ...ended.filter((x): x is AgentRecord => x !== undefined)];
  const out: AgentSummary[] = [];
  const seen = new Set<string>([rec.id, ...here]);
  const { subtreeRecords } = await import('../fleet/live.js');
  for (const r of far) {
    if (seen.has(r.id) || !(await descendsFrom(records, r, rec.id))) continue;
    // This host's agents below one that runs elsewhere: the children index names them.
    for (const x of [r, ...subtreeRecords(layout, r.id)]) {
      if (seen.has(x.id)) continue;
      seen.add(x.id);
      out.push({ id: x.id, name: x.name, status: x.status, depth: x.depth, turns: x.turns, lastLine: x.lastLine });
    }
  }
  return out;
}
