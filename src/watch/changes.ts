import { existsSync, mkdirSync, readdirSync, watch, type FSWatcher } from 'node:fs';
import { join } from 'node:path';
import { maildir } from '../inbox/maildir.js';
import type { Layout } from '../layout/layout.js';

/**
 * Tells the dashboard when the fleet may have changed: kernel file watches (inotify on
 * Linux) on `state/agents/` (atomic renames of registry records), `state/inbox/` (a new
 * agent's Maildir appears), every `state/inbox/<id>/new/` (mail arrives or is claimed),
 * `state/slots/queue/` (who waits for a running slot) and `state/seen/` (failures looked at).
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
    // Made here if missing (inside a fleet that exists only: never recursive), so the first
    // ticket or seen mark is heard at once rather than at the next tick.
    for (const dir of [join(this.layout.slotsDir, 'queue'), this.layout.seenDir]) {
      try { mkdirSync(dir); } catch { /* there already, or no fleet here */ }
    }
    for (const dir of this.fixed()) this.add(dir);
    this.sync();
  }

  /** The folders watched whatever the fleet holds: the registry, the inboxes, the line for slots, the seen marks (attention.ts). */
  private fixed(): string[] {
    return [this.layout.registryDir, this.layout.inboxRoot, join(this.layout.slotsDir, 'queue'), this.layout.seenDir];
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
    for (const dir of this.fixed()) if (!this.watchers.has(dir)) this.add(dir);
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
