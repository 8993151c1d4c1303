import { watch, type FSWatcher } from 'node:fs';
import { nullLog, type Log } from '../audit/logger.js';
import { errorMessage, isErrno } from '../errors.js';

/**
 * A change notifier for one directory (a Maildir's new/): `fs.watch` (one inotify watch, the
 * event names the file) or, when watching cannot work, a timer. Events are hints only: the
 * reader re-reads the directory on its own schedule, so a dropped event delays and never loses.
 * One readdir per hint batch keeps claiming N messages O(N) — chokidar re-read the directory
 * on every rename (see docs/decisions.md).
 */
export interface DirWatcher {
  /** True when the watcher polls (asked to, or inotify could not start or failed). */
  readonly polling: boolean;
  close(): void;
}

export interface WatchDirOptions {
  /** 'always' polls from the start (network filesystems). */
  poll?: 'auto' | 'always';
  /** Polling interval, ms (default 100). */
  pollIntervalMs?: number;
  log?: Log;
  /** What is being watched, for log lines. */
  label?: string;
}

/** Errors that mean inotify cannot work here (limits, unsupported filesystem): poll instead. */
export function isWatchUnavailable(err: unknown): boolean {
  return ['ENOSPC', 'EMFILE', 'ENFILE', 'ENOSYS', 'EPERM', 'EACCES', 'ENOTSUP', 'EINVAL'].some((c) => isErrno(err, c));
}

/**
 * Calls `onChange(name)` when an entry of `dir` appears or goes (`name` null: "something
 * changed, re-read"). With polling, `onChange(null)` every interval. A watch that fails to
 * start or fails later turns into polling at once (the first poll runs within one interval).
 */
export function watchDir(dir: string, onChange: (name: string | null) => void, opts: WatchDirOptions = {}): DirWatcher {
  const log = opts.log ?? nullLog;
  const interval = opts.pollIntervalMs ?? 100;
  let closed = false;
  let fsw: FSWatcher | undefined;
  let timer: NodeJS.Timeout | undefined;

  const startPolling = (why: unknown): void => {
    if (closed || timer) return;
    if (why !== undefined)
      log.warn({ dir: opts.label ?? dir, err: errorMessage(why) }, 'inbox: inotify unavailable, polling instead');
    fsw?.close();
    fsw = undefined;
    timer = setInterval(() => onChange(null), interval);
    // Whatever may have arrived while the watch was failing.
    queueMicrotask(() => {
      if (!closed) onChange(null);
    });
  };

  if (opts.poll === 'always') startPolling(undefined);
  else {
    try {
      injectedWatchFault();
      fsw = watch(dir, { persistent: true }, (_event, name) => {
        if (!closed) onChange(typeof name === 'string' ? name : null);
      });
      fsw.on('error', (err) => {
        if (isWatchUnavailable(err)) startPolling(err);
        else {
          // The directory went away or the kernel gave up on it: re-read by timer from now on.
          log.warn({ dir: opts.label ?? dir, err: errorMessage(err) }, 'inbox: watcher error, polling instead');
          startPolling(undefined);
        }
      });
    } catch (err) {
      startPolling(err);
    }
  }

  return {
    get polling() {
      return timer !== undefined;
    },
    close() {
      closed = true;
      fsw?.close();
      clearInterval(timer);
    },
  };
}

/** `FLOTILLA_FAULT=watch-enospc`: fs.watch fails as it does when the user's inotify instances are used up (tests). */
function injectedWatchFault(): void {
  if (process.env.FLOTILLA_FAULT?.split(',').includes('watch-enospc')) {
    throw Object.assign(new Error('ENOSPC: System limit for number of file watchers reached (injected)'), {
      code: 'ENOSPC',
    });
  }
}
