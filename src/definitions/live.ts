import { FolderWatch, nearestExisting } from '../folder-watch.js';
import type { Definition, DefinitionIssue, LoadResult } from './types.js';

/**
 * The definitions a long-lived process sees (a pane's `/agent list` and `@name`, the
 * dashboard): loaded again within a second of any change in their folders, without a
 * restart. How they are watched is kept apart from what is loaded: `load` is the same loader
 * a spawn runs (whatever it checks, it checks here too), re-run on each change.
 *
 * A definition whose file no longer loads keeps its last good version, and the result says
 * why in one issue naming the file ("… — keeping the last good 'x'"); once the file loads
 * again, or is removed, that version goes.
 */

export interface DefinitionsChange {
  added: string[];
  changed: string[];
  removed: string[];
  /** Definitions kept at their last good version, each with the file's error. */
  kept: DefinitionIssue[];
}

export interface LiveDefinitionsOptions {
  load: () => Promise<LoadResult>;
  /** The folders definitions are read from (`definitionDirs`). */
  folders: readonly string[];
  /** Told after each reload that changed what is seen. */
  onChange?: (change: DefinitionsChange) => void;
  debounceMs?: number;
}

export class LiveDefinitions {
  private result: LoadResult;
  private readonly watch: FolderWatch;
  private loading: Promise<void> = Promise.resolve();
  private again = false;
  private running = false;

  private constructor(
    first: LoadResult,
    private readonly opts: LiveDefinitionsOptions,
  ) {
    this.result = first;
    this.watch = new FolderWatch(nearestExisting(opts.folders), () => this.reload(), opts.debounceMs ?? 100);
  }

  static async open(opts: LiveDefinitionsOptions): Promise<LiveDefinitions> {
    return new LiveDefinitions(await opts.load(), opts);
  }

  /** What is seen now. */
  get current(): LoadResult {
    return this.result;
  }

  /** Resolves once the reload under way (if any) has finished; for tests and callers that just wrote a file. */
  settled(): Promise<void> {
    return this.loading;
  }

  close(): void {
    this.watch.close();
  }

  /** Loads again now; changes that arrive meanwhile cause one more load after it. */
  reload(): Promise<void> {
    if (this.running) {
      this.again = true;
      return this.loading;
    }
    this.running = true;
    this.loading = (async () => {
      do {
        this.again = false;
        try {
          const next = keepLastGood(this.result, await this.opts.load());
          const change = diff(this.result, next);
          this.result = next;
          if (change) this.opts.onChange?.(change);
        } catch {
          // A loader that throws (it reports bad files as issues, so this is I/O trouble): keep what is seen.
        }
      } while (this.again);
      this.running = false;
    })();
    return this.loading;
  }
}

/**
 * `next`, with each definition that `previous` had from a file that now failed to load put
 * back, and that file's error saying so. A name now defined elsewhere is not put back.
 */
export function keepLastGood(previous: LoadResult, next: LoadResult): LoadResult {
  const names = new Set(next.definitions.map((d) => d.name));
  const kept: Definition[] = [];
  const errors = next.errors.map((e) => {
    const old = previous.definitions.find((d) => d.source.path === e.path && !names.has(d.name));
    if (!old) return e;
    names.add(old.name);
    kept.push(old);
    return { ...e, name: old.name, message: `${e.message} — keeping the last good '${old.name}'` };
  });
  return { ...next, definitions: [...next.definitions, ...kept], errors };
}

function diff(before: LoadResult, after: LoadResult): DefinitionsChange | undefined {
  const was = new Map(before.definitions.map((d) => [d.name, d]));
  const now = new Map(after.definitions.map((d) => [d.name, d]));
  const added = [...now.keys()].filter((n) => !was.has(n));
  const removed = [...was.keys()].filter((n) => !now.has(n));
  const changed = [...now.keys()].filter(
    (n) => was.has(n) && JSON.stringify(was.get(n)) !== JSON.stringify(now.get(n)),
  );
  const kept = after.errors.filter((e) => e.message.endsWith(`— keeping the last good '${e.name ?? ''}'`));
  const keptBefore = new Set(before.errors.map((e) => `${e.path}\n${e.message}`));
  const newlyKept = kept.filter((e) => !keptBefore.has(`${e.path}\n${e.message}`));
  if (added.length + removed.length + changed.length + newlyKept.length === 0) return undefined;
  return { added, changed, removed, kept: newlyKept };
}
