import type { Bus, HostBeat } from '../bus/types.js';
import type { AgentRecord } from '../fleet/record.js';
import { isTerminal } from '../fleet/record-status.js';
import { byCodeUnit } from '../compare.js';

/** Another host's agents as `status` shows them (§17): its name, its last heartbeat, its records. */
export interface HostGroup {
  host: string;
  beat: HostBeat | null;
  records: AgentRecord[];
  /** How many of its ended records were not read (beyond the window asked for): shown as `… N finished`. */
  endedNotRead: number;
}

/**
 * Every other host's agents on a `nats://` bus, grouped by host (§17, §18): a host that beats
 * but runs nothing is shown too, and one with records but no heartbeat is lost. `localIds` are
 * this host's records, shown from its own registry (a promise of them: the bus is read while the
 * caller reads its files). `window`: read each host's live agents
 * and only that many of the ones that ended last (the rest counted in `endedNotRead`); without it,
 * every other host's record. `beatsRead`: the hosts' heartbeats when the caller reads them
 * already. Null when the bus cannot be read.
 */
export async function otherHosts(
  bus: Pick<Bus, 'records'>,
  self: string,
  localIds: ReadonlySet<string> | Promise<ReadonlySet<string>>,
  window?: number,
  beatsRead: Promise<HostBeat[]> = bus.records.hosts(),
): Promise<HostGroup[] | null> {
  let beats: HostBeat[];
  let all: AgentRecord[];
  let more: Record<string, number> = {};
  let local: ReadonlySet<string>;
  try {
    // Without a window (`status --all`): every other host's record, from the bus alone (this host's are the caller's).
    const read =
      window === undefined
        ? bus.records.others().then((records) => ({
            records: records.sort((a, b) => byCodeUnit(a.createdAt, b.createdAt) || byCodeUnit(a.id, b.id)),
            more: {},
          }))
        : bus.records.recent(window);
    [beats, { records: all, more }, local] = await Promise.all([beatsRead, read, localIds]);
  } catch {
    return null;
  }
  const groups = new Map<string, HostGroup>();
  const group = (host: string, beat: HostBeat | null): HostGroup => {
    let g = groups.get(host);
    if (!g) groups.set(host, (g = { host, beat, records: [], endedNotRead: more[host] ?? 0 }));
    return g;
  };
  for (const b of beats) if (b.host !== self) group(b.host, b);
  for (const r of all) {
    if (local.has(r.id) || !r.host || r.host === self) continue;
    group(r.host, null).records.push(r);
  }
  for (const host of Object.keys(more)) if (host !== self && more[host]) group(host, null);
  return [...groups.values()].sort((a, b) => (a.host < b.host ? -1 : a.host > b.host ? 1 : 0));
}

/** A group's heading: `Host gpu1 — heartbeat 3 s ago` or `Host gpu1 — LOST: no heartbeat for 45 s`. */
export function hostHeading(host: string, beat: HostBeat | null, self = false): string {
  if (self) return `Host ${host} (this machine)`;
  if (!beat || beat.ageMs === null) return `Host ${host} — LOST: no heartbeat on the bus`;
  const age = `${Math.round(beat.ageMs / 1000)} s`;
  return beat.lost ? `Host ${host} — LOST: no heartbeat for ${age}` : `Host ${host} — heartbeat ${age} ago`;
}

/**
 * What `status` shows of another host's records: its live agents and the `window` that ended
 * last, as this host's own tree is shown (docs/decisions.md, the finished window), and how
 * many finished ones that leaves out. A host with a long history would otherwise print
 * every agent it ever ran.
 */
export function windowed(records: readonly AgentRecord[], window: number): { records: AgentRecord[]; hidden: number } {
  const ended = records
    .filter((r) => isTerminal(r.status))
    .sort((a, b) => byCodeUnit(b.finishedAt ?? '', a.finishedAt ?? '') || byCodeUnit(b.id, a.id));
  const kept = new Set(ended.slice(0, window).map((r) => r.id));
  const shown = records.filter((r) => !isTerminal(r.status) || kept.has(r.id));
  return { records: shown, hidden: records.length - shown.length };
}
