// fs.promises loads on first use: node:fs/promises brings readline and the file watchers as it loads (~2 ms of every
// status on a bus, which mostly has nothing queued). Not import(): a fast bundle runs without an ES module loader.
import { promises as fsp, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { isErrno } from '../errors.js';
import { writeMessageFile } from '../inbox/deliver.js';
import { isCandidate, type Maildir } from '../inbox/maildir.js';
import type { Layout } from '../layout/layout.js';

/**
 * This host's outbox (§18): mail is written here, fsynced, before it is published, and
 * removed once the bus has acknowledged it. A sender that finds the bus unreachable leaves
 * it here and any later process of the fleet on this host publishes it again under the same
 * message id, which the stream de-duplicates: nothing lost, nothing twice
 * (docs/decisions-hosts.md, "The outbox is written ahead").
 */
export function outboxOf(layout: Layout): Maildir {
  const dir = layout.outbox;
  return { dir, tmp: join(dir, 'tmp'), new: join(dir, 'new'), cur: join(dir, 'cur'), bad: join(dir, 'bad') };
}

/** Keeps one message (its file bytes) until the bus has it; returns the path to remove then. */
export function keep(box: Maildir, file: string, data: Buffer): Promise<string> {
  return writeMessageFile(box, file, data);
}

/** What the outbox holds, oldest first (names start with the sending time). */
export async function queued(box: Maildir): Promise<string[]> {
  try {
    // One small directory, read at once: its first asynchronous read started libuv's thread pool,
    // ~5 ms of every `status` on a bus, which otherwise needs none.
    return readdirSync(box.new).filter(isCandidate).sort();
  } catch (err) {
    if (isErrno(err, 'ENOENT')) return [];
    throw err;
  }
}

/** A queued message's bytes, or undefined when another flusher has sent and removed it. */
export async function readQueued(box: Maildir, file: string): Promise<Buffer | undefined> {
  try {
    return await fsp.readFile(join(box.new, file));
  } catch (err) {
    if (isErrno(err, 'ENOENT')) return undefined;
    throw err;
  }
}

/** Removes a message the bus has acknowledged (a second flusher may have done it first). */
export async function sent(path: string): Promise<void> {
  await fsp.unlink(path).catch((err: unknown) => {
    if (!isErrno(err, 'ENOENT')) throw err;
  });
}
