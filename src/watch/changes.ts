import { existsSync, mkdirSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { FolderWatch } from '../folder-watch.js';
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
  private watch: FolderWatch | null = null;
  private closed = false;

  constructor(
    private readonly layout: Layout,
    private readonly onChange: () => void,
    private readonly debounceMs = 100,
  ) {}

  start(): void {
    if (this.closed) return;
    // Made here if missing (inside a fleet that exists only: never recursive), so the first
    // ticket or seen mark is heard at once rather than at the next tick.
    for (const dir of [join(this.layout.slotsDir, 'queue'), this.layout.seenDir]) {
      try {
        mkdirSync(dir);
      } catch {
        /* there already, or no fleet here */
      }
    }
    this.watch = new FolderWatch(() => this.folders(), this.onChange, this.debounceMs);
  }

  close(): void {
    this.closed = true;
    this.watch?.close();
  }

  /** The registry, the inboxes, the line for slots, the seen marks (attention.ts), and every Maildir's new/. */
  private folders(): string[] {
    const dirs = [
      this.layout.registryDir,
      this.layout.inboxRoot,
      join(this.layout.slotsDir, 'queue'),
      this.layout.seenDir,
    ];
    let owners: string[] = [];
    try {
      owners = readdirSync(this.layout.inboxRoot);
    } catch {
      // No inboxes yet: the inbox root's watch (once it exists) brings the first.
    }
    for (const owner of owners) {
      if (owner.startsWith('.')) continue;
      const dir = maildir(this.layout, owner).new;
      if (existsSync(dir)) dirs.push(dir);
    }
    return dirs;
  }
}
