import { existsSync, watch, type FSWatcher } from 'node:fs';
import { dirname } from 'node:path';

/**
 * Calls back when anything in some folders may have changed: the definition folders, the
 * config files' folders. One kernel watch (inotify) per folder; a folder that does not exist
 * yet is waited for by watching its nearest existing ancestor, and watched itself once it
 * appears. Bursts (an editor's write-rename-chmod) fold into one call after `debounceMs`.
 * Nothing polls: an unchanged folder costs nothing. What the change means is the caller's
 * business (it re-runs its loader), so this knows nothing of what is loaded.
 */
export class FolderWatch {
  private readonly watchers = new Map<string, FSWatcher>();
  private timer: NodeJS.Timeout | null = null;
  private closed = false;

  constructor(
    private readonly folders: readonly string[],
    private readonly onChange: () => void,
    private readonly debounceMs = 100,
  ) {
    this.sync();
  }

  close(): void {
    this.closed = true;
    if (this.timer) clearTimeout(this.timer);
    for (const w of this.watchers.values()) w.close();
    this.watchers.clear();
  }

  /** Watches each folder, or the nearest ancestor that exists; drops watches no longer needed. */
  private sync(): void {
    if (this.closed) return;
    const wanted = new Set(this.folders.map(nearestExisting));
    for (const [dir, w] of this.watchers) {
      if (!wanted.has(dir)) {
        w.close();
        this.watchers.delete(dir);
      }
    }
    for (const dir of wanted) if (!this.watchers.has(dir)) this.add(dir);
  }

  private add(dir: string): void {
    try {
      const w = watch(dir, { persistent: false }, () => this.bump());
      w.on('error', () => {
        // The folder went away (removed, renamed): watch what is there now.
        w.close();
        this.watchers.delete(dir);
        this.bump();
      });
      this.watchers.set(dir, w);
    } catch {
      // Gone between the check and the watch: the next event's sync tries again.
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

function nearestExisting(dir: string): string {
  let d = dir;
  while (!existsSync(d) && dirname(d) !== d) d = dirname(d);
  return d;
}
