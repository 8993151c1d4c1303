import type { Bus } from '../bus/types.js';
import { RECENT_WINDOW } from '../fleet/live.js';
import { otherHosts } from '../spawn/host-groups.js';
import { BusPoll } from './bus-poll.js';
import type { OtherHost } from './host-rows.js';

/**
 * Every other host's agents for the dashboard on a `nats://` bus (docs/design.md §17.6),
 * read the way `flotilla status` reads them (spawn/host-groups.ts) by a BusPoll — the live
 * records and each host's last ended ones, and the heartbeats. `current` is null when the bus
 * could not be read. Subscribers are told only when what the screen shows changed (a record,
 * a heading's whole seconds, LOST).
 */
export class HostsPoll extends BusPoll<OtherHost[] | null> {
  constructor(bus: Pick<Bus, 'records'>, self: string, onChange: () => void, everyMs: number) {
    // This host's agents come from its registry (the dashboard's own reader): none are skipped by id here.
    const read = () => otherHosts(bus, self, new Set(), RECENT_WINDOW).catch(() => null);
    super([], read, shownOf, onChange, everyMs);
  }
}

function shownOf(groups: OtherHost[] | null): string {
  return JSON.stringify(
    groups?.map((g) => [
      g.host,
      g.beat?.lost ?? true,
      g.beat?.ageMs == null ? null : Math.round(g.beat.ageMs / 1000),
      g.records,
      g.endedNotRead,
    ]) ?? null,
  );
}
