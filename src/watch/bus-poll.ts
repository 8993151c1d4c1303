/**
 * What the dashboard reads from a `nats://` bus rather than this host's fleet root (the other
 * hosts' agents, the boards and leases), read once per `everyMs`: never two reads at once, and
 * never more than a tenth of the time. The screen is told only when `key` of what was read
 * changed. A poll rather than a KV watch: docs/decisions-hosts.md "The dashboard polls the bus".
 */
export class BusPoll<T> {
  private value: T;
  private shown = '';
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<void> | null = null;
  private closed = false;

  /**
   * `read` answers what it could read (its own failures folded in, e.g. as null); `key` is what the screen shows of it.
   */
  constructor(
    initial: T,
    private readonly read: () => Promise<T>,
    private readonly key: (value: T) => string,
    private readonly onChange: () => void,
    private readonly everyMs: number,
  ) {
    this.value = initial;
  }

  /** What the last read found (`initial` before the first). */
  get current(): T {
    return this.value;
  }

  start(): void {
    const next = (): void => {
      const t0 = performance.now();
      void this.poll().then(() => {
        if (this.closed) return;
        // A slow read (thousands of records, a big board, a loaded host) spaces the next one
        // out: the dashboard spends at most a tenth of its time reading the bus.
        this.timer = setTimeout(next, Math.max(this.everyMs, 9 * (performance.now() - t0)));
        this.timer.unref();
      });
    };
    next();
  }

  /** Reads the bus now (a slow bus: the poll under way is the answer). */
  poll(): Promise<void> {
    this.running ??= this.readOnce().finally(() => {
      this.running = null;
    });
    return this.running;
  }

  close(): void {
    this.closed = true;
    if (this.timer) clearTimeout(this.timer);
  }

  private async readOnce(): Promise<void> {
    const value = await this.read();
    if (this.closed) return;
    this.value = value;
    const key = this.key(value);
    if (key === this.shown) return;
    this.shown = key;
    this.onChange();
  }
}
