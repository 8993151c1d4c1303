import type { Layout } from '../layout/layout.js';
import type { LeaseView } from '../leases/list.js';
import type { BoardListing } from '../tasks/list.js';
import { BusPoll } from './bus-poll.js';

/**
 * The fleet's boards and leases for the dashboard on a `nats://` bus (docs/design.md §15, §16,
 * §18): they live in the bus's BOARD and LEASES buckets, not in this host's fleet root, so they
 * are read from there (team-store/) by a BusPoll, as hosts-poll.ts polls the records.
 */
export interface TeamSource {
  /** Every board's listing as last read; null before the first read or when the bus could not be read. */
  listings(): readonly BoardListing[] | null;
  /** Every repository's leases as last read; null as above. */
  leases(): readonly LeaseView[] | null;
}

type Team = readonly [BoardListing[] | null, LeaseView[] | null];

export class TeamPoll extends BusPoll<Team> implements TeamSource {
  constructor(layout: Layout, onChange: () => void, everyMs: number) {
    super([null, null], () => readTeam(layout), JSON.stringify, onChange, everyMs);
  }

  listings(): readonly BoardListing[] | null {
    return this.current[0];
  }

  leases(): readonly LeaseView[] | null {
    return this.current[1];
  }
}

async function readTeam(layout: Layout): Promise<Team> {
  const [{ listAllBoards }, { listLeases }] = await Promise.all([
    import('../team-store/board.js'),
    import('../team-store/leases.js'),
  ]);
  return Promise.all([listAllBoards(layout).catch(() => null), listLeases(layout).catch(() => null)]);
}
