import { existsSync, readdirSync, watch, type FSWatcher } from 'node:fs';
import { maildir } from '../inbox/maildir.js';
import type { Layout } from '../layout/layout.js';

/**
 * Tells the dashboard when the fleet may have changed: kernel file watches (inotify on
 * Linux) on `state/agents/` (atomic renames of registry records), `state/inbox/` (a new
 * agent's Maildir appears) and every `state/inbox/<id>/new/` (mail arrives or is claimed).
 * Bursts are folded into one call after `debounceMs`. Nothing polls: a quiet fleet costs no
 * CPU. A watch that fails (its folder was removed) is dropped and re-added on the next sync.
 */
export class FleetChanges {
  private readonly watchers = new Map<string, FSWatcher>();
  private timer: NodeJS.Timeout | null = null;
  private closed = false;

  constructor(
    private readonly layout: Layout,
    private readonly onChange: () => void,
    private readonly debounceMs = 100,
  ) {}

  start(): void {
    this.add(this.layout.registryDir);
    this.add(this.layout.inboxRoot);
    this.sync();
  }

  /** Watches the new/ folder of every Maildir that exists now (cheap; called after each change). */
  sync(): void {
    if (this.closed) return;
    let owners: string[];
    try {
      owners = readdirSync(this.layout.inboxRoot);
    } catch {
      return;
    }
    for (const owner of owners) {
      if (owner.startsWith('.')) continue;
      const dir = maildir(this.layout, owner).new;
      if (!this.watchers.has(dir) && existsSync(dir)) this.add(dir);
    }
    if (!this.watchers.has(this.layout.registryDir)) this.add(this.layout.registryDir);
    if (!this.watchers.has(this.layout.inboxRoot)) this.add(this.layout.inboxRoot);
  }

  /** How many folders are watched (for tests). */
  get watched(): number {
    return this.watchers.size;
  }

  close(): void {
    this.closed = true;
    if (this.timer) clearTimeout(this.timer);
    for (const w of this.watchers.values()) w.close();
    this.watchers.clear();
  }

  private add(dir: string): void {
    try {
      const w = watch(dir, { persistent: false }, () => this.bump());
      w.on('error', () => {
        w.close();
        this.watchers.delete(dir);
        this.bump();
      });
      this.watchers.set(dir, w);
    } catch {
      // Not there yet: the next sync adds it.
    }
  }

  private bump(): void {
    if (this.closed || this.timer) return;
    this.timer = setTimeout(() => {
      this.timer = null;
      this.sync();
      this.onChange();
    }, this.debounceMs);
  }
}
