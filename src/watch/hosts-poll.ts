import type { Bus } from '../bus/types.js';
import { RECENT_WINDOW } from '../fleet/live.js';
import { otherHosts } from '../spawn/host-groups.js';
import type { OtherHost } from './host-rows.js';

/**
 * Every other host's agents for the dashboard on a `nats://` bus (docs/design.md §17.6),
 * read the way `flotilla status` reads them (spawn/host-groups.ts) once per `everyMs` — the
 * live records and each host's last ended ones, and the heartbeats, never two at once, and never more
 * than a tenth of the time. Subscribers are
 * told only when what the screen shows changed (a record, a heading's whole seconds, LOST).
 * A poll rather than a KV watch: docs/decisions-hosts.md "The dashboard polls the bus".
 */
export class HostsPoll {
  private groups: OtherHost[] | null = [];
  private shown = '';
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<void> | null = null;
  private closed = false;

  constructor(
    private readonly bus: Pick<Bus, 'records'>,
    private readonly self: string,
    private readonly onChange: () => void,
    private readonly everyMs: number,
  ) {}

  /** The last groups read; null when the bus could not be read. */
  get current(): OtherHost[] | null {
    return this.groups;
  }

  start(): void {
    const next = (): void => {
      const t0 = performance.now();
      void this.poll().then(() => {
        if (this.closed) return;
        // A slow read (thousands of records, a loaded host) spaces the next one out: the
        // dashboard spends at most a tenth of its time reading the bus.
        this.timer = setTimeout(next, Math.max(this.everyMs, 9 * (performance.now() - t0)));
        this.timer.unref();
      });
    };
    next();
  }

  /** Reads the bus now (a slow bus: the poll under way is the answer). */
  poll(): Promise<void> {
    this.running ??= this.read().finally(() => {
      this.running = null;
    });
    return this.running;
  }

  close(): void {
    this.closed = true;
    if (this.timer) clearTimeout(this.timer);
  }

  private async read(): Promise<void> {
    // This host's agents come from its registry (the dashboard's own reader): none are skipped by id here.
    const groups = await otherHosts(this.bus, this.self, new Set(), RECENT_WINDOW).catch(() => null);
    if (this.closed) return;
    const key = JSON.stringify(
      groups?.map((g) => [
        g.host,
        g.beat?.lost ?? true,
        g.beat?.ageMs == null ? null : Math.round(g.beat.ageMs / 1000),
        g.records,
        g.endedNotRead,
      ]) ?? null,
    );
    this.groups = groups;
    if (key === this.shown) return;
    this.shown = key;
    this.onChange();
  }
}
