import { statSync } from 'node:fs';
import { dirname } from 'node:path';
import { userPaths, type Layout } from '../layout/layout.js';
import { FolderWatch, nearestExisting } from '../folder-watch.js';
import type { Config } from './schema.js';

/**
 * The config a long-lived process acts on (the dashboard's approvals, a pane's chat
 * commands): loaded again within a second of a change to the user or project config file,
 * without a restart. A file that no longer loads keeps the last good config, and `error`
 * says why — the loader's whole message (file, key, what to do), never cut.
 * What a running agent was given at its spawn (its limits, its policy) does not change.
 */
export interface ConfigChange {
  config: Config;
  /** Set while the files do not load: the loader's message; the config is the last good one. */
  error: string | undefined;
}

function modifiedSince(path: string, ms: number): boolean {
  try {
    return statSync(path).mtimeMs >= ms;
  } catch {
    return false;
  }
}

export class LiveConfig {
  private value: Config;
  private problem: string | undefined;
  private readonly watch: FolderWatch;

  constructor(
    private readonly layout: Layout,
    initial: Config,
    private readonly opts: {
      env?: NodeJS.ProcessEnv;
      onChange?: (change: ConfigChange) => void;
      debounceMs?: number;
    } = {},
  ) {
    this.value = initial;
    const env = opts.env ?? process.env;
    const files = [userPaths(env).configFile, layout.configFile];
    this.watch = new FolderWatch(
      nearestExisting(files.map((f) => dirname(f))),
      () => void this.reload(),
      opts.debounceMs ?? 100,
    );
    // A change between this process's first load and the watch above (a slow start) has no
    // event: a file written since the process began is read once more now.
    if (files.some((f) => modifiedSince(f, performance.timeOrigin))) void this.reload();
  }

  get current(): Config {
    return this.value;
  }

  /** Why the files on disk are not what is in use, or undefined. */
  get error(): string | undefined {
    return this.problem;
  }

  close(): void {
    this.watch.close();
  }

  /** Loads the files again; tells `onChange` when the config or its error changed. */
  async reload(): Promise<void> {
    // The loader (and YAML) is imported on the first change only: a dashboard that never sees one never loads it.
    const { loadConfig } = await import('./load.js');
    let next = this.value;
    let problem: string | undefined;
    try {
      next = (await loadConfig({ layout: this.layout, ...(this.opts.env ? { env: this.opts.env } : {}) })).config;
    } catch (err) {
      problem = `${err instanceof Error ? err.message : String(err)} — keeping the last good config`;
    }
    const changed = JSON.stringify(next) !== JSON.stringify(this.value) || problem !== this.problem;
    this.value = next;
    this.problem = problem;
    if (changed) this.opts.onChange?.({ config: next, error: problem });
  }
}
