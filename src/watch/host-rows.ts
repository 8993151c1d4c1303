import type { HostBeat } from '../bus/types.js';
import type { AgentRecord } from '../fleet/record.js';
import { RECENT_WINDOW } from '../fleet/live.js';
import { hostHeading, windowed } from '../spawn/host-groups.js';
import { treeOrder } from '../fleet/status-view.js';
import { stateOf, toRow, treeBranches, type HostSection, type Snapshot, type WatchRow } from './rows.js';

/**
 * The dashboard on a bus (docs/design.md §17.6): this host's rows under `Host NAME (this
 * machine)`, then each other host's agents under the heading `flotilla status` prints for it
 * (spawn/host-groups.ts, the one grouping), in tree order. Pure: the groups are read from the
 * bus by hosts-poll.ts.
 */

/** Another host's agents as read from the bus (spawn/host-groups.ts `HostGroup`). */
export interface OtherHost {
  host: string;
  beat: HostBeat | null;
  records: readonly AgentRecord[];
  /** Its ended records not read from the bus (beyond the window). */
  endedNotRead?: number;
}

/**
 * `local` with every other host's rows after its own and a heading for each host. `others`
 * null: the bus could not be read, said in this host's heading (its rows are all there is).
 */
export function withOtherHosts(
  local: Snapshot,
  self: string,
  others: readonly OtherHost[] | null,
  now: number,
): Snapshot {
  const rows = [...local.rows];
  const here = `${hostHeading(self, null, true)}${others ? '' : ' — the bus is unreachable: other hosts not shown'}`;
  const hosts: HostSection[] = [{ host: self, heading: here, lost: false, first: 0, count: rows.length }];
  for (const g of others ?? []) {
    // Its live agents and the ones that ended last, as status and this host's own rows show them.
    const shown = windowed(g.records, RECENT_WINDOW);
    const mine = hostRows(g.host, shown.records, now);
    const hidden = shown.hidden + (g.endedNotRead ?? 0);
    const more = hidden ? ` · … ${hidden} finished — flotilla status --all` : '';
    hosts.push({
      host: g.host,
      heading: hostHeading(g.host, g.beat) + more,
      lost: !g.beat || g.beat.lost,
      first: rows.length,
      count: mine.length,
    });
    rows.push(...mine);
  }
  return { ...local, rows, hosts };
}

/**
 * Another host's agents in tree order. What only that host can judge stays there: no unread
 * counts (its spools), no `!` (its approvals, its seen marks: its own dashboard and `flotilla
 * next` there), and its pids are not this machine's, so no row is called dead here.
 */
function hostRows(host: string, records: readonly AgentRecord[], now: number): WatchRow[] {
  const ordered = treeOrder(records.map((record) => ({ record })));
  const branches = treeBranches(ordered.map((o) => o.level));
  const inputs = { records, unread: new Map<string, number>(), approvals: [], liveness: () => 'live' as const, now };
  return ordered.map(({ entry }, i) => {
    const { state, tone } = stateOf(entry.record);
    return { ...toRow(entry.record, inputs, null, null), state, tone, need: null, branch: branches[i]!, host };
  });
}
