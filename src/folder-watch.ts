import { existsSync, watch, type FSWatcher } from 'node:fs';
import { dirname } from 'node:path';

/**
 * Calls back when anything in a set of folders may have changed. One kernel watch (inotify)
 * per folder. The set is asked for again after every change, so a folder that appears is
 * watched and one no longer wanted is let go; a watch that fails (its folder was removed) is
 * dropped and the set asked for again. Bursts (an editor's write-rename-chmod, a burst of
 * mail) fold into one call after `debounceMs`. Nothing polls: an unchanged folder costs
 * nothing. What a change means is the caller's business, so this knows nothing of it.
 */
export class FolderWatch {
  private readonly watchers = new Map<string, FSWatcher>();
  private timer: NodeJS.Timeout | null = null;
  private closed = false;

  constructor(
    private readonly folders: () => Iterable<string>,
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

  /** Watches each wanted folder not watched yet; drops watches no longer wanted. */
  sync(): void {
    if (this.closed) return;
    const wanted = new Set(this.folders());
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
        w.close();
        this.watchers.delete(dir);
        this.bump();
      });
      this.watchers.set(dir, w);
    } catch {
      // Not there (yet, or any more): the next change's sync tries again.
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

/**
 * Folders that may not exist yet, as watchable folders: each, or its nearest existing
 * ancestor, which is watched until the folder itself appears.
 */
export function nearestExisting(folders: readonly string[]): () => string[] {
  return () =>
    folders.map((dir) => {
      let d = dir;
      while (!existsSync(d) && dirname(d) !== d) d = dirname(d);
      return d;
    });
}
