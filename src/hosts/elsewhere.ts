import type { Config } from '../config/schema.js';
import { FlotillaError, UsageError } from '../errors.js';
import type { AgentRecord } from '../fleet/record.js';
import { resolveAgent } from '../fleet/registry.js';
import type { Layout } from '../layout/layout.js';
import type { Host } from './ssh.js';
import { selfHost } from './self.js';

/** The fleet's records across hosts (bus/types.ts RecordsBus; the bus is handed in: bus/ imports hosts/). */
export interface FleetRecords {
  get(id: string): Promise<AgentRecord | undefined>;
  /** The records whose id starts with a prefix, found by key names (RecordsBus.find). */
  find(prefix: string): Promise<AgentRecord[]>;
}

/** Agents a command names that another host runs, and that host. */
export interface Elsewhere {
  host: Host;
  records: AgentRecord[];
}

/**
 * `wait`, `output` and `cancel` of agents only another host runs (design §17.6): an id (or
 * unique prefix) this host's registry does not know is looked up in the fleet's records on
 * the bus; when another host runs it, the command is run there, through the `hosts:` entry
 * of that name. Undefined when every name is this host's (or the bus is `maildir`, where there
 * is no other host to ask): the command then runs here and says what it says of an unknown id.
 * Agents of two hosts, or of this host and another, in one command are a usage error.
 */
export async function agentsElsewhere(
  layout: Layout,
  config: Config,
  prefixes: readonly string[],
  fleet: () => Promise<FleetRecords>,
): Promise<Elsewhere | undefined> {
  const unknown = prefixes.filter((p) => !knownHere(layout, p));
  if (!unknown.length || config.fleet.bus === 'maildir') return undefined;
  const fleetRecords = await fleet();
  const here = selfHost(config.fleet);
  const records: AgentRecord[] = [];
  for (const p of unknown) {
    const rec = await findInFleet(fleetRecords, p);
    // Not on the bus, or this host's own: the command here says what it says of an unknown id.
    if (!rec || !rec.host || rec.host === here) return undefined;
    records.push(rec);
  }
  const hosts = [...new Set(records.map((r) => r.host))];
  if (hosts.length > 1 || unknown.length < prefixes.length) {
    const where = records.map((r) => `${r.id} on ${r.host}`).join(', ');
    throw new UsageError(
      `these agents run on different hosts (${where}${unknown.length < prefixes.length ? `, the rest on ${here}` : ''}) — name the agents of one host per command`,
      { code: 'hosts-mixed' },
    );
  }
  return { host: hostOf(config, records[0]!), records };
}

/**
 * An agent by id or unique id prefix among every host's records; undefined when none matches,
 * a one-line error when several do.
 */
export async function findInFleet(records: FleetRecords, prefix: string): Promise<AgentRecord | undefined> {
  const exact = await records.get(prefix);
  if (exact) return exact;
  // By the bus's key names: no record is read but the ones that match.
  const matches = await records.find(prefix);
  if (matches.length > 1)
    throw new FlotillaError(
      `'${prefix}' matches ${matches.length} agents across the fleet's hosts: ${matches
        .slice(0, 10)
        .map((r) => r.id)
        .join(', ')} — give more characters`,
      { code: 'ambiguous' },
    );
  return matches[0];
}

function knownHere(layout: Layout, prefix: string): boolean {
  try {
    resolveAgent(layout, prefix);
    return true;
  } catch (err) {
    if (err instanceof FlotillaError && err.code === 'not-found') return false;
    throw err;
  }
}

/** The `hosts:` entry a record's host names, or one line saying it is not configured here. */
function hostOf(config: Config, rec: AgentRecord): Host {
  const name = rec.host!;
  const entry = config.hosts[name];
  if (entry) return { name, ...entry };
  throw new FlotillaError(
    `${rec.id} runs on host '${name}', which is not under hosts: in your config — add it (hosts: {${name}: {ssh: user@machine}}) to act on it from here, or run the command on ${name}`,
    { code: 'unknown-host' },
  );
}

/**
 * Whether `rec` is `ancestor` or below it, following parents through the fleet's records
 * (an agent may cancel only its own subtree, wherever its children run: spawn/ops.ts).
 */
export async function descendsFrom(records: FleetRecords, rec: AgentRecord, ancestor: string): Promise<boolean> {
  let at: AgentRecord | undefined = rec;
  // A record's depth bounds the walk: a cycle in damaged records cannot loop.
  for (let steps = rec.depth + 1; at && steps >= 0; steps--) {
    if (at.id === ancestor) return true;
    if (!at.parentId) return false;
    at = await records.get(at.parentId);
  }
  return false;
}
