import { mkdir, readFile, rename, stat } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { audit } from '../audit/audit.js';
import { nullLog, type Log } from '../audit/logger.js';
import { FlotillaError, isErrno } from '../errors.js';
import type { Layout } from '../layout/layout.js';
import { exists, unlink } from './fs-calls.js';
import { baseName, listNames, maildir, READ_SUFFIX } from './maildir.js';
import { DEFAULT_MAX_BODY_BYTES, type InboxMessage } from './message.js';
import { BadMessageError, parseMessage } from './parse.js';

/** A message as found in a Maildir. */
export interface InboxItem {
  /** File name in new/ (for a read message: its name in cur/ without `:2,S`). */
  file: string;
  /** Where it is now. */
  path: string;
  /** True once claimed (it lives in cur/). */
  read: boolean;
  message: InboxMessage;
}

export interface ReadOptions {
  /** Largest body accepted (`inbox.max_body_bytes`); a bigger file goes to bad/. */
  maxBodyBytes?: number;
  /** Where rejected files are reported (WARN). */
  log?: Log;
  /** Other addresses this reader accepts: the agents a resumed agent continues, whose unread mail it adopted. */
  aliases?: readonly string[];
}

// Frontmatter is small; anything this far beyond the body limit is not a message.
const HEADER_ALLOWANCE = 64 * 1024;

/**
 * Reads one file of `owner`'s Maildir. Returns undefined when the file is gone (another
 * reader claimed it) or was not a message — which is moved to bad/ with a WARN and a
 * `message_rejected` audit line, so one bad file never stops the rest. A file in new/ whose
 * name is already claimed in cur/ is a second copy of a read message (a bus handed it over
 * again, or a claimer died between its link and its unlink): it is removed, never shown again.
 */
export async function readItem(
  layout: Layout,
  owner: string,
  path: string,
  opts: ReadOptions = {},
): Promise<InboxItem | undefined> {
  const name = basename(path);
  const read = name.includes(':');
  const max = (opts.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES) + HEADER_ALLOWANCE;
  try {
    // The twin's check rides beside the stat: one more syscall per message, no more latency.
    const [st, claimed] = await Promise.all([stat(path), !read && exists(claimedTwin(path))]);
    if (claimed) {
      await unlink(path).catch(() => undefined);
      (opts.log ?? nullLog).debug({ inbox: owner, file: name }, 'inbox: dropped a copy of a message already claimed');
      return undefined;
    }
    if (!st.isFile()) throw new BadMessageError('not a regular file');
    if (st.size > max) throw new BadMessageError(`file is ${st.size} bytes, over the ${max}-byte limit`);
    const message = parseMessage(await readFile(path, 'utf8'));
    if (message.to !== owner && !opts.aliases?.includes(message.to))
      throw new BadMessageError(`addressed to '${message.to}', found in the inbox of '${owner}'`);
    return { file: baseName(name), path, read, message };
  } catch (err) {
    if (isErrno(err, 'ENOENT')) return undefined;
    if (!(err instanceof BadMessageError)) throw err;
    await quarantine(layout, owner, path, err.message, opts.log ?? nullLog);
    return undefined;
  }
}

/** Moves a file that is not a valid message to `<inbox>/bad/`, logs a WARN and audits it. */
export async function quarantine(layout: Layout, owner: string, path: string, reason: string, log: Log): Promise<void> {
  const { bad } = maildir(layout, owner);
  const name = basename(path);
  const dest = join(bad, name);
  try {
    await mkdir(bad, { recursive: true });
    await rename(path, dest);
  } catch (err) {
    if (isErrno(err, 'ENOENT')) return; // another reader moved it first
    throw err;
  }
  log.warn(
    { inbox: owner, file: name, reason, moved_to: dest },
    `inbox: not a valid message, moved to bad/: ${reason}`,
  );
  audit(layout, { event: 'message_rejected', agent: owner, file: name, reason });
}

export interface ListOptions extends ReadOptions {
  /** Include read messages (cur/) as well as unread ones (new/). */
  includeRead?: boolean;
}

/** Messages in `owner`'s inbox, oldest first (ids are time-sortable). Never claims. */
export async function list(layout: Layout, owner: string, opts: ListOptions = {}): Promise<InboxItem[]> {
  const box = maildir(layout, owner);
  const paths = listNames(box.new).map((n) => join(box.new, n));
  if (opts.includeRead) paths.push(...listNames(box.cur).map((n) => join(box.cur, n)));
  const items: InboxItem[] = [];
  for (const p of paths) {
    const item = await readItem(layout, owner, p, opts);
    if (item) items.push(item);
  }
  return items.sort((a, b) => (a.message.id < b.message.id ? -1 : a.message.id > b.message.id ? 1 : 0));
}

/**
 * Finds one message by a unique prefix of its id, unread or read, without claiming it.
 * No match or an ambiguous prefix is an error that says what to do.
 */
export async function peek(
  layout: Layout,
  owner: string,
  idPrefix: string,
  opts: ReadOptions = {},
): Promise<InboxItem> {
  const items = await list(layout, owner, { ...opts, includeRead: true });
  const exact = items.find((i) => i.message.id === idPrefix);
  if (exact) return exact;
  const matches = items.filter((i) => i.message.id.startsWith(idPrefix));
  if (matches.length === 1) return matches[0]!;
  if (matches.length === 0) {
    throw new FlotillaError(
      `no message matches '${idPrefix}' in the inbox of '${owner}' — run 'flotilla inbox ${owner === 'human' ? '' : owner + ' '}--all' to list them`,
      { code: 'not-found' },
    );
  }
  throw new FlotillaError(
    `'${idPrefix}' matches ${matches.length} messages: ${matches
      .slice(0, 5)
      .map((i) => i.message.id)
      .join(', ')} — give more characters`,
    { code: 'ambiguous' },
  );
}

/** Where the message at `newPath` (in some Maildir's new/) lives once claimed. */
function claimedTwin(newPath: string): string {
  return join(dirname(dirname(newPath)), 'cur', readName(basename(newPath)));
}

/** The cur/ name of a claimed message. */
export function readName(file: string): string {
  return baseName(file) + READ_SUFFIX;
}
