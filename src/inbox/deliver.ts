import { join } from 'node:path';
import { audit } from '../audit/audit.js';
import { FlotillaError, UsageError, isErrno } from '../errors.js';
import { poolCalls, type FileCalls } from './fs-calls.js';
import type { Layout } from '../layout/layout.js';
import { maildir, messageFileName, READ_SUFFIX, type Maildir } from './maildir.js';
import {
  DEFAULT_MAX_BODY_BYTES,
  MessageFieldError,
  composeMessage,
  type InboxMessage,
  type MessageDraft,
} from './message.js';
import { serializeMessage } from './serialize.js';
import { redactValue } from '../secrets/redact.js';

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
  /**
   * A fixed file name, for a message that may be sent again after a crash (a completion):
   * when that name is already in new/ or cur/ nothing is written. Give `draft.id` too.
   */
  fixedName?: string;
  /** The file calls: libuv's pool (default), or blocking ones for a process that does nothing else meanwhile. */
  calls?: FileCalls;
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
export async function deliver(layout: Layout, given: MessageDraft, opts: DeliverOptions = {}): Promise<Delivered> {
  const now = opts.now ?? Date.now();
  const { message, data } = prepareMessage(given, opts.maxBodyBytes, now);
  const file = opts.fixedName ?? messageFileName(message.id, now);
  const path = await writeMessageFile(maildir(layout, message.to), file, data, {
    fixed: opts.fixedName !== undefined,
    beforeLink: opts.beforeLink,
    ...(opts.calls ? { calls: opts.calls } : {}),
  });
  audit(layout, {
    event: 'message_sent',
    agent: message.from,
    id: message.id,
    from: message.from,
    to: message.to,
    kind: message.kind,
    ...(message.broadcast_id ? { broadcast_id: message.broadcast_id } : {}),
  });
  return { message, file, path };
}

/**
 * The checks and framing every bus applies before a message leaves the sender (§4): secret
 * values redacted (§11), the body limit, the schema. Returns the message and its file bytes.
 */
export function prepareMessage(
  given: MessageDraft,
  maxBodyBytes = DEFAULT_MAX_BODY_BYTES,
  now = Date.now(),
): { message: InboxMessage; data: Buffer } {
  // Bodies and summaries never carry a secret value this process holds (§11).
  const draft = redactValue(given);
  const bytes = Buffer.byteLength(draft.body ?? '');
  if (bytes > maxBodyBytes) {
    throw new FlotillaError(
      `message body is ${formatBytes(bytes)}, over the ${formatBytes(maxBodyBytes)} limit (inbox.max_body_bytes) — put large content in a file and send its path`,
      { code: 'message-too-large' },
    );
  }
  const message = compose(draft, now);
  return { message, data: Buffer.from(serializeMessage(message)) };
}

/** Counts this process's tries at fixed names, so no two tries share a temp file. */
let fixedTries = 0;

/**
 * Writes a message file into a Maildir's new/ the Maildir way (§4) and returns its path.
 * `fixed`: the name may be written again (a retried completion, mail a bus hands over twice),
 * so a name already in new/ or cur/ is left alone: delivered once. A copy linked while the
 * first is being claimed (after the look in cur/) stays in new/ until a reader removes it
 * (readItem drops a name already claimed), and a claim never takes it twice (claim.ts).
 */
export async function writeMessageFile(
  box: Maildir,
  file: string,
  data: Buffer,
  opts: { fixed?: boolean; beforeLink?: (tmpPath: string) => void | Promise<void>; calls?: FileCalls } = {},
): Promise<string> {
  const { closeFd, exists, fsyncFd, link, mkdirp, unlink, writeAll } = opts.calls ?? poolCalls;
  // A fixed name may be retried by several processes, or twice at once by one (a redelivery while the first
  // copy is still being written): each try writes its own temp file.
  const tmpPath = join(box.tmp, opts.fixed ? `${file}.${process.pid}.${++fixedTries}.tmp` : file);
  const newPath = join(box.new, file);

  if (opts.fixed) {
    const read = join(box.cur, `${file}${READ_SUFFIX}`);
    // Delivered and already claimed by an earlier try: nothing to do.
    if (await exists(read)) return read;
    // Left by a process that had this pid before (and died between open and unlink): ours now.
    await unlink(tmpPath).catch(() => undefined);
  }
  const fd = await openTemp(tmpPath, box, opts.calls ?? poolCalls);
  try {
    try {
      await writeAll(fd, data);
      await fsyncFd(fd);
    } finally {
      await closeFd(fd);
    }
    await opts.beforeLink?.(tmpPath);
    await link(tmpPath, newPath).catch(async (err: unknown) => {
      // Sent before by a process that died before it could say so: delivered, once.
      if (opts.fixed && isErrno(err, 'EEXIST')) return;
      // new/ removed since this process last made the Maildir: make it again, link once more.
      if (!isErrno(err, 'ENOENT')) throw err;
      await mkdirp(box.new);
      await mkdirp(box.cur);
      await link(tmpPath, newPath);
    });
  } finally {
    // Linked or failed, the temp name has done its job.
    await unlink(tmpPath).catch(() => undefined);
  }
  // Resolves only once an fsync of new/ that began after our link() has finished.
  await syncDirShared(box.new, opts.calls ?? poolCalls);
  return newPath;
}

function compose(draft: MessageDraft, now: number): InboxMessage {
  try {
    return composeMessage(draft, now);
  } catch (err) {
    if (!(err instanceof MessageFieldError)) throw err;
    throw new UsageError(`invalid message field '${err.field}': ${err.problem} — fix it and send again`, {
      cause: err,
    });
  }
}

/** Maildirs this process has created or seen: three mkdir calls per message were a third of its syscalls. */
const knownBoxes = new Set<string>();

/** Creates the temp file with O_EXCL, making the Maildir first if this process has not seen it (or it was removed). */
async function openTemp(
  tmpPath: string,
  box: { tmp: string; new: string; cur: string },
  { mkdirp, openExcl }: FileCalls,
): Promise<number> {
  if (knownBoxes.has(box.tmp)) {
    try {
      return await openExcl(tmpPath);
    } catch (err) {
      if (!isErrno(err, 'ENOENT')) throw err;
      knownBoxes.delete(box.tmp);
    }
  }
  for (const d of [box.tmp, box.new, box.cur]) await mkdirp(d);
  knownBoxes.add(box.tmp);
  return openExcl(tmpPath);
}

/**
 * One directory fsync for every delivery that linked while the previous one ran (group
 * commit): a delivery waits for the first fsync that *starts* after its link(), so each is
 * as durable as with its own fsync, and concurrent senders in one process share the cost.
 */
const dirSyncs = new Map<string, { running: Promise<void>; next: Promise<void> | null }>();

function syncDirShared(dir: string, calls: FileCalls): Promise<void> {
  const state = dirSyncs.get(dir);
  if (!state) {
    const running = syncDir(dir, calls).finally(() => advance(dir));
    dirSyncs.set(dir, { running, next: null });
    return running;
  }
  // One is running and may have begun before our link(): ride on the one after it.
  state.next ??= state.running.catch(() => undefined).then(() => syncDir(dir, calls));
  return state.next;
}

function advance(dir: string): void {
  const state = dirSyncs.get(dir);
  if (!state) return;
  if (!state.next) {
    dirSyncs.delete(dir);
    return;
  }
  const running = state.next.finally(() => advance(dir));
  // Keep the chain's rejection handled here; each waiter sees it through its own promise.
  running.catch(() => undefined);
  dirSyncs.set(dir, { running, next: null });
}

/** fsync a directory so the new entry survives a power cut; some platforms refuse, which is fine. */
async function syncDir(dir: string, { closeFd, fsyncFd, openRead }: FileCalls): Promise<void> {
  const fd = await openRead(dir);
  try {
    await fsyncFd(fd);
  } catch (err) {
    if (!isErrno(err, 'EINVAL') && !isErrno(err, 'EISDIR') && !isErrno(err, 'EPERM') && !isErrno(err, 'EBADF'))
      throw err;
  } finally {
    await closeFd(fd);
  }
}

function formatBytes(n: number): string {
  if (n >= 1_048_576) return `${(n / 1_048_576).toFixed(n % 1_048_576 === 0 ? 0 : 1)} MiB`;
  if (n >= 1024) return `${(n / 1024).toFixed(n % 1024 === 0 ? 0 : 1)} KiB`;
  return `${n} bytes`;
}
