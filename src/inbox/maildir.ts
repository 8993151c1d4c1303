import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, unlinkSync } from 'node:fs';
import { join } from 'node:path';
import { isErrno } from '../errors.js';
import type { Layout } from '../layout/layout.js';

/**
 * One Maildir per agent (§4): `state/inbox/<id>/{tmp,new,cur}`, plus `bad/` for files that
 * are not valid messages. Paths come from `layout.inbox(id)`; this file only names the
 * sub-folders and files inside it.
 */
export interface Maildir {
  dir: string;
  tmp: string;
  new: string;
  cur: string;
  bad: string;
}

export function maildir(layout: Layout, owner: string): Maildir {
  const dir = layout.inbox(owner);
  return { dir, tmp: join(dir, 'tmp'), new: join(dir, 'new'), cur: join(dir, 'cur'), bad: join(dir, 'bad') };
}

/** Creates tmp/, new/ and cur/ (idempotent). A watcher on a missing directory reports nothing. */
export function ensureMaildir(layout: Layout, owner: string): Maildir {
  const box = maildir(layout, owner);
  for (const d of [box.tmp, box.new, box.cur]) mkdirSync(d, { recursive: true });
  return box;
}

/** Maildir's "seen" flag: `cur/<name>:2,S`. */
export const READ_SUFFIX = ':2,S';

let host: string | undefined;
/** The host part of a file name: no '/', ':' or '.' (they separate the name's parts). */
function safeHost(): string {
  host ??= hostname().replace(/[^A-Za-z0-9-]/g, '_') || 'localhost';
  return host;
}

/** The machine's name (os.hostname()), from /proc on Linux: loading node:os is ~0.3 ms of a `flotilla send` (§14). */
function hostname(): string {
  try {
    return readFileSync('/proc/sys/kernel/hostname', 'utf8').trim();
  } catch {
    return process.getBuiltinModule('node:os').hostname();
  }
}

/** `<ms>.<random>.<pid>.<host>.md`; we use the message id as the random part, which keeps names unique. */
export function messageFileName(messageId: string, now = Date.now(), pid = process.pid): string {
  return `${now}.${messageId}.${pid}.${safeHost()}.md`;
}

/** The base name of a file in new/ or cur/ (without the `:2,…` info part). */
export function baseName(file: string): string {
  const i = file.indexOf(':');
  return i === -1 ? file : file.slice(0, i);
}

/** Readers skip dotfiles (editor and tool temp files), as Maildir readers do. */
export function isCandidate(name: string): boolean {
  return !name.startsWith('.');
}

/** Names in a Maildir folder; a missing folder is empty. */
export function listNames(dir: string): string[] {
  try {
    return readdirSync(dir).filter(isCandidate).sort();
  } catch (err) {
    if (isErrno(err, 'ENOENT')) return [];
    throw err;
  }
}

/**
 * Unread messages (files in new/), for `status`: mail nobody has read yet. Counted, not
 * listed: status asks this for every row it shows, so it builds one path (by hand: path.join
 * normalizes it character by character, ~10 µs in a fresh process) and sorts nothing.
 */
export function unreadCount(layout: Layout, owner: string): number {
  return unclaimed(layout.inbox(owner), false).length;
}

/** The names of unread messages in new/, sorted (the dashboard reads the person's). */
export function unreadNames(layout: Layout, owner: string): string[] {
  return unclaimed(layout.inbox(owner), true);
}

/**
 * new/'s names less the second copies of read messages: a file whose name is claimed in cur/
 * already is dropped by the next reader (read.ts), never shown, so it is not unread mail. One
 * existence check per unread file, none when new/ is empty.
 */
function unclaimed(dir: string, sorted: boolean): string[] {
  let names: string[];
  try {
    names = readdirSync(`${dir}/new`).filter(isCandidate);
  } catch (err) {
    if (isErrno(err, 'ENOENT')) return [];
    throw err;
  }
  const out = names.filter((n) => !existsSync(`${dir}/cur/${baseName(n)}${READ_SUFFIX}`));
  return sorted ? out.sort() : out;
}

export const STALE_TEMP_MS = 24 * 60 * 60 * 1000;

/**
 * Removes files in tmp/ older than `maxAgeMs` (default one day): what senders killed
 * mid-write leave behind. They were never linked into new/, so no message is lost.
 * Returns the names removed. The harness runs it at start.
 */
export function sweepStaleTemp(
  layout: Layout,
  owner: string,
  opts: { maxAgeMs?: number; now?: number } = {},
): string[] {
  const { tmp } = maildir(layout, owner);
  const cutoff = (opts.now ?? Date.now()) - (opts.maxAgeMs ?? STALE_TEMP_MS);
  const removed: string[] = [];
  let names: string[];
  try {
    names = readdirSync(tmp);
  } catch (err) {
    if (isErrno(err, 'ENOENT')) return removed;
    throw err;
  }
  for (const name of names) {
    const path = join(tmp, name);
    try {
      const st = statSync(path);
      if (!st.isFile() || st.mtimeMs >= cutoff) continue;
      unlinkSync(path);
      removed.push(name);
    } catch (err) {
      // Another sweeper got there first.
      if (!isErrno(err, 'ENOENT')) throw err;
    }
  }
  return removed;
}
