import type { Layout } from '../layout/layout.js';
import { FleetChanges } from './changes.js';
import { formatElapsed } from './format.js';
import { FleetReader } from './gather.js';
import { withOtherHosts, type OtherHost } from './host-rows.js';
import { sameSnapshot, type Snapshot } from './rows.js';
import type { TeamSource } from './team-poll.js';

/**
 * The dashboard's data source: a snapshot of the fleet, re-read when files change and on a
 * slow tick (elapsed times of live agents), handed to subscribers only when it would draw
 * differently. So an idle fleet causes no reads beyond the tick and no renders at all.
 */
export interface FeedOptions {
  /** Folding window for bursts of file events (default 100 ms). */
  debounceMs?: number;
  /** Re-read interval for elapsed times (default 5 s). */
  tickMs?: number;
  now?: () => number;
  /** Called when a row's harness is dead but its record is not ended yet (the reaper's work, §5.7). */
  onDead?: () => Promise<unknown>;
  /**
   * On a bus (§17.6): this host's name and the other hosts' agents as last read (hosts-poll.ts); call `refresh()` when
   * they change.
   */
  hosts?: { self: string; current: () => readonly OtherHost[] | null };
  /** On a bus: the fleet's boards and leases as last read (team-poll.ts); call `refresh()` when they change. */
  team?: TeamSource;
}

export class FleetFeed {
  private readonly reader: FleetReader;
  private readonly changes: FleetChanges;
  private readonly listeners = new Set<(s: Snapshot) => void>();
  private readonly now: () => number;
  private readonly tickMs: number;
  private tick: NodeJS.Timeout | null = null;
  private snap: Snapshot;
  private readonly onDead: (() => Promise<unknown>) | undefined;
  private reaping = false;
  private loadingParser = false;
  private readonly hosts: FeedOptions['hosts'];

  constructor(layout: Layout, opts: FeedOptions = {}) {
    this.reader = new FleetReader(layout, opts.team);
    this.now = opts.now ?? Date.now;
    this.tickMs = opts.tickMs ?? 5_000;
    this.onDead = opts.onDead;
    this.hosts = opts.hosts;
    this.changes = new FleetChanges(layout, () => this.refresh(), opts.debounceMs ?? 100);
    this.snap = this.read();
  }

  get current(): Snapshot {
    return this.snap;
  }

  /**
   * Loads the message parser if the first read met an approval request, and reads again, so the first frame shows it.
   */
  async ready(): Promise<void> {
    if (!this.reader.needsParser) return;
    await this.reader.loadParser();
    this.snap = this.read();
  }

  start(): void {
    this.changes.start();
    this.tick = setInterval(() => this.refresh(), this.tickMs);
    // Changes between the first read and the watches starting would otherwise be missed.
    this.refresh();
  }

  subscribe(fn: (s: Snapshot) => void): () => void {
    this.listeners.add(fn);
    return () => this.listeners.delete(fn);
  }

  /** Re-reads the fleet; tells subscribers only when the screen would change. */
  refresh(): void {
    const next = this.read();
    if (this.reader.needsParser && !this.loadingParser) {
      // A request arrived: load the parser once, then read again to show it.
      this.loadingParser = true;
      void this.reader.loadParser().then(
        () => this.refresh(),
        () => undefined,
      );
    }
    if (this.onDead && !this.reaping && next.rows.some((r) => r.dead)) {
      // Like every flotilla command, the dashboard ends records of dead harnesses; the
      // record change then redraws through the registry watch.
      this.reaping = true;
      void this.onDead()
        .catch(() => undefined)
        .finally(() => {
          this.reaping = false;
        });
    }
    if (sameSnapshot(this.snap, next, formatElapsed)) {
      // Keep the newest data for actions (pids, approvals) without a redraw.
      this.snap = next;
      return;
    }
    this.snap = next;
    for (const fn of this.listeners) fn(next);
  }

  close(): void {
    if (this.tick) clearInterval(this.tick);
    this.changes.close();
    this.listeners.clear();
  }

  private read(): Snapshot {
    try {
      const now = this.now();
      const local = this.reader.snapshot(now);
      return this.hosts ? withOtherHosts(local, this.hosts.self, this.hosts.current(), now) : local;
    } catch {
      // A folder removed under us (gc): show what we had until the next change.
      return this.snap ?? { rows: [], humanUnread: 0, approvals: [] };
    }
  }
}
