import { link, mkdir, open, unlink } from 'node:fs/promises';
import { join } from 'node:path';
import { ZodError } from 'zod';
import { audit } from '../audit/audit.js';
import { FlotillaError, UsageError, isErrno } from '../errors.js';
import type { Layout } from '../layout/layout.js';
import { maildir, messageFileName } from './maildir.js';
import { DEFAULT_MAX_BODY_BYTES, composeMessage, type InboxMessage, type MessageDraft } from './message.js';
import { serializeMessage } from './serialize.js';

export interface DeliverOptions {
  /** Largest body in bytes (`inbox.max_body_bytes`, default 1 MiB). */
  maxBodyBytes?: number;
  /** Clock, for tests. */
  now?: number;
  /**
   * Called with the temp path after the file is written and fsynced, before link(): the
   * window a crash test kills the sender in. Nothing is in new/ yet at that point.
   */
  beforeLink?: (tmpPath: string) => void | Promise<void>;
}

export interface Delivered {
  message: InboxMessage;
  /** File name in the recipient's new/. */
  file: string;
  path: string;
}

/**
 * Delivers one message (§4), crash-safe, lock-free, with any number of concurrent writers:
 * create `tmp/<name>` with O_EXCL, write, fsync, link() into new/ (link never overwrites),
 * unlink the tmp name, fsync new/. The message is delivered the instant link() returns; a
 * sender killed before that leaves only a temp file (sweepStaleTemp), never a partial message.
 * `draft.to` must already be resolved (resolveRecipient); `draft.from` is the sender's identity.
 */
export async function deliver(layout: Layout, draft: MessageDraft, opts: DeliverOptions = {}): Promise<Delivered> {
  const max = opts.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES;
  const bytes = Buffer.byteLength(draft.body ?? '');
  if (bytes > max) {
    throw new FlotillaError(
      `message body is ${formatBytes(bytes)}, over the ${formatBytes(max)} limit (inbox.max_body_bytes) — put large content in a file and send its path`,
      { code: 'message-too-large' },
    );
  }
  const now = opts.now ?? Date.now();
  const message = compose(draft, now);
  const box = maildir(layout, message.to);
  const file = messageFileName(message.id, now);
  const tmpPath = join(box.tmp, file);
  const newPath = join(box.new, file);
  const data = Buffer.from(serializeMessage(message));

  await ensureDirs(box.tmp, box.new, box.cur);
  const fh = await open(tmpPath, 'wx', 0o644);
  try {
    try {
      await fh.writeFile(data);
      await fh.sync();
    } finally {
      await fh.close();
    }
    await opts.beforeLink?.(tmpPath);
    await link(tmpPath, newPath);
  } finally {
    // Linked or failed, the temp name has done its job.
    await unlink(tmpPath).catch(() => undefined);
  }
  await syncDir(box.new);
  audit(layout, { event: 'message_sent', agent: message.from, id: message.id, from: message.from, to: message.to, kind: message.kind });
  return { message, file, path: newPath };
}

function compose(draft: MessageDraft, now: number): InboxMessage {
  try {
    return composeMessage(draft, now);
  } catch (err) {
    if (!(err instanceof ZodError)) throw err;
    const issue = err.issues[0];
    const field = issue?.path.join('.') || 'message';
    throw new UsageError(`invalid message field '${field}': ${issue?.message ?? 'invalid'} — fix it and send again`, { cause: err });
  }
}

async function ensureDirs(...dirs: string[]): Promise<void> {
  for (const d of dirs) await mkdir(d, { recursive: true });
}

/** fsync a directory so the new entry survives a power cut; some platforms refuse, which is fine. */
async function syncDir(dir: string): Promise<void> {
  const fh = await open(dir, 'r');
  try {
    await fh.sync();
  } catch (err) {
    if (!isErrno(err, 'EINVAL') && !isErrno(err, 'EISDIR') && !isErrno(err, 'EPERM') && !isErrno(err, 'EBADF')) throw err;
  } finally {
    await fh.close();
  }
}

function formatBytes(n: number): string {
  if (n >= 1_048_576) return `${(n / 1_048_576).toFixed(n % 1_048_576 === 0 ? 0 : 1)} MiB`;
  if (n >= 1024) return `${(n / 1024).toFixed(n % 1024 === 0 ? 0 : 1)} KiB`;
  return `${n} bytes`;
}
