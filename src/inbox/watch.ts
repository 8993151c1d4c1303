import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { nullLog, type Log } from '../audit/logger.js';
import { errorMessage } from '../errors.js';
import type { Layout } from '../layout/layout.js';
import { ensureMaildir, isCandidate } from './maildir.js';
import { readItem, type InboxItem } from './read.js';
import { watchDir } from './watch-dir.js';

export interface WatchOptions {
  /** `inbox.poll`: 'always' polls instead of using inotify (network filesystems). Default 'auto'. */
  poll?: 'auto' | 'always';
  /** `inbox.poll_interval_ms` (default 100), used only when polling. */
  pollIntervalMs?: number;
  /** `inbox.rescan_secs` (default 30): rescan new/ this often to catch events the kernel dropped. */
  rescanSecs?: number;
  /** `inbox.max_body_bytes`. */
  maxBodyBytes?: number;
  /** Addresses accepted besides the owner (see ReadOptions.aliases). */
  aliases?: readonly string[];
  log?: Log;
}

export type MessageListener = (item: InboxItem) => void;

/**
 * A live view of new mail. Each message in new/ is reported once (by file name) to the
 * `message` listeners; messages found before any listener is attached are kept and handed
 * to the first one, and to the async iterator when listeners are not used.
 */
export interface InboxWatcher extends AsyncIterable<InboxItem> {
  /** Resolves once the watcher is armed and the startup scan is done. */
  readonly ready: Promise<void>;
  /** True when the watcher polls (poll: always, or inotify could not start). */
  readonly polling: boolean;
  on(event: 'message', listener: MessageListener): this;
  off(event: 'message', listener: MessageListener): this;
  /** Scans new/ now (the periodic rescan calls this). */
  rescan(): Promise<void>;
  /** Stops watching; a pending iterator ends. */
  close(): Promise<void>;
}

/**
 * Watches `owner`'s new/ (§4): creates the Maildir first, watches only new/ (`fs.watch`; an
 * event names the file, which is read alone), scans at startup and every `rescanSecs`,
 * polls only when asked or when inotify fails. Idle cost is one inotify watch and a timer.
 */
export function watchInbox(layout: Layout, owner: string, opts: WatchOptions = {}): InboxWatcher {
  const log = opts.log ?? nullLog;
  const box = ensureMaildir(layout, owner);
  const seen = new Set<string>();
  const outlet = messageOutlet(owner, log);
  let closed = false;
  let timer: NodeJS.Timeout | undefined;

  const handle = async (name: string): Promise<void> => {
    if (closed || !isCandidate(name) || seen.has(name)) return;
    seen.add(name);
    try {
      const item = await readItem(layout, owner, join(box.new, name), opts);
      // Gone (claimed, moved): forget it, so the name means nothing if it comes back.
      if (item) outlet.emit(item);
      else seen.delete(name);
    } catch (err) {
      // Unreadable for a reason other than its content (EACCES, EIO): let the rescan retry it.
      seen.delete(name);
      log.warn({ inbox: owner, file: name, err: errorMessage(err) }, 'inbox: could not read a message');
    }
  };

  const scanOnce = async (): Promise<void> => {
    let names: string[];
    try {
      names = (await readdir(box.new)).sort();
    } catch (err) {
      log.warn({ inbox: owner, err: errorMessage(err) }, 'inbox: rescan failed');
      return;
    }
    // Forget names no longer in new/ (claimed): keeps `seen` as small as the inbox.
    const present = new Set(names);
    for (const n of seen) if (!present.has(n)) seen.delete(n);
    for (const n of names) if (!seen.has(n)) await handle(n);
  };
  const rescan = oneAtATime(scanOnce, () => closed);

  let dirWatcher: ReturnType<typeof watchDir> | undefined;
  const ready = (async () => {
    dirWatcher = watchDir(box.new, (name) => void (name === null ? rescan() : handle(name)), {
      poll: opts.poll ?? 'auto',
      pollIntervalMs: opts.pollIntervalMs ?? 100,
      log,
      label: owner,
    });
    // The startup scan runs after the watcher is armed, so nothing falls between the two.
    await rescan();
    if (closed) return;
    timer = setInterval(() => void rescan(), (opts.rescanSecs ?? 30) * 1000);
    // The watch keeps the process alive while watching; the rescan timer need not.
    timer.unref();
  })();

  const watcher: InboxWatcher = {
    ready,
    get polling() {
      return dirWatcher?.polling ?? opts.poll === 'always';
    },
    on(_event, listener) {
      outlet.on(listener);
      return watcher;
    },
    off(_event, listener) {
      outlet.off(listener);
      return watcher;
    },
    rescan,
    async close() {
      if (closed) return;
      closed = true;
      if (timer) clearInterval(timer);
      dirWatcher?.close();
      outlet.end();
    },
    [Symbol.asyncIterator](): AsyncIterator<InboxItem> {
      return {
        next: () => outlet.next(),
        return: async () => {
          await watcher.close();
          return { value: undefined, done: true };
        },
      };
    },
  };
  return watcher;
}

/**
 * Where new mail goes: to every `message` listener, or, while there is none, queued for the
 * first listener to come or for the async iterator. Once ended, nothing more goes out.
 */
function messageOutlet(owner: string, log: Log) {
  const listeners = new Set<MessageListener>();
  const queue: InboxItem[] = [];
  const waiters: ((r: IteratorResult<InboxItem>) => void)[] = [];
  let ended = false;
  const emit = (item: InboxItem): void => {
    if (ended) return;
    if (listeners.size > 0) {
      for (const fn of listeners) {
        try {
          fn(item);
        } catch (err) {
          log.error({ inbox: owner, err: errorMessage(err) }, 'inbox: a message listener threw');
        }
      }
      return;
    }
    const waiter = waiters.shift();
    if (waiter) waiter({ value: item, done: false });
    else queue.push(item);
  };
  return {
    emit,
    on(listener: MessageListener): void {
      listeners.add(listener);
      while (queue.length > 0 && listeners.size > 0) emit(queue.shift()!);
    },
    off(listener: MessageListener): void {
      listeners.delete(listener);
    },
    /** The iterator's next message: a queued one, the end, or the next to come. */
    next(): Promise<IteratorResult<InboxItem>> {
      const item = queue.shift();
      if (item) return Promise.resolve({ value: item, done: false });
      if (ended) return Promise.resolve({ value: undefined, done: true });
      return new Promise((resolve) => waiters.push(resolve));
    },
    /** Ends a pending iterator; later mail is dropped. */
    end(): void {
      ended = true;
      for (const w of waiters.splice(0)) w({ value: undefined, done: true });
    },
  };
}

/** One run of `task` at a time; calls that come in meanwhile fold into one more run after it. */
function oneAtATime(task: () => Promise<void>, stopped: () => boolean): () => Promise<void> {
  let running: Promise<void> | null = null;
  let again = false;
  return () => {
    if (stopped()) return Promise.resolve();
    if (running) {
      again = true;
      return running;
    }
    running = (async () => {
      do {
        again = false;
        await task();
      } while (again && !stopped());
    })().finally(() => {
      running = null;
    });
    return running;
  };
}
