import type { Layout } from '../layout/layout.js';
import type { LeaseView } from '../leases/list.js';
import type { BoardListing } from '../tasks/list.js';

/**
 * The fleet's boards and leases for the dashboard on a `nats://` bus (docs/design.md §15, §16,
 * §18): they live in the bus's BOARD and LEASES buckets, not in this host's fleet root, so they
 * are read from there (team-store/) once per `everyMs` — never two reads at once, and never
 * more than a tenth of the time — and the screen is told only when what it shows changed.
 * A poll, as hosts-poll.ts polls the records (docs/decisions-hosts.md "The dashboard polls the bus").
 */
export interface TeamSource {
  /** Every board's listing as last read; null before the first read or when the bus could not be read. */
  listings(): readonly BoardListing[] | null;
  /** Every repository's leases as last read; null as above. */
  leases(): readonly LeaseView[] | null;
}

export class TeamPoll implements TeamSource {
  private boards: BoardListing[] | null = null;
  private views: LeaseView[] | null = null;
  private shown = '';
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<void> | null = null;
  private closed = false;

  constructor(
    private readonly layout: Layout,
    private readonly onChange: () => void,
    private readonly everyMs: number,
  ) {}

  listings(): readonly BoardListing[] | null {
    return this.boards;
  }

  leases(): readonly LeaseView[] | null {
    return this.views;
  }

  start(): void {
    const next = (): void => {
      const t0 = performance.now();
      void this.poll().then(() => {
        if (this.closed) return;
        // A slow read (a big board, a loaded host) spaces the next one out.
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
    const [{ listAllBoards }, { listLeases }] = await Promise.all([
      import('../team-store/board.js'),
      import('../team-store/leases.js'),
    ]);
    const [boards, views] = await Promise.all([
      listAllBoards(this.layout).catch(() => null),
      listLeases(this.layout).catch(() => null),
    ]);
    if (this.closed) return;
    this.boards = boards;
    this.views = views;
    const key = JSON.stringify([boards, views]);
    if (key === this.shown) return;
    this.shown = key;
    this.onChange();
  }
}
