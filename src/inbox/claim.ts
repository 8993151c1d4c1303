import { join } from 'node:path';
import { audit } from '../audit/audit.js';
import { isErrno } from '../errors.js';
import type { Layout } from '../layout/layout.js';
import { link, rename, unlink } from './fs-calls.js';
import { baseName, maildir } from './maildir.js';
import type { InboxItem } from './read.js';
import { readName } from './read.js';

export type ClaimResult =
  | { status: 'claimed'; path: string }
  /** Someone else claimed it first (or it was never there): not an error. */
  | { status: 'already_claimed' };

export interface ClaimOptions {
  /** Called after the link into cur/, before new/x is removed: the window a crash test kills the claimer in. */
  afterLink?: () => void | Promise<void>;
}

/**
 * Claims a message: `link(new/x → cur/x:2,S)`, then unlink new/x. link() never overwrites,
 * so among any number of concurrent claimers exactly one wins, even when a second copy of x
 * lands in new/ after the first was claimed (a bus hands a message over again under its
 * fixed name): that copy's link fails with EEXIST, it is dropped, and the caller hears
 * `already_claimed`. A rename would have replaced cur/x:2,S and claimed it twice. A crash
 * between the link and the unlink leaves x in both folders; readers drop the new/ one
 * (readItem). The harness claims only after its transcript has recorded the message (§4),
 * so a crash before the link re-delivers rather than loses it.
 */
export async function claim(
  layout: Layout,
  owner: string,
  item: InboxItem | string,
  opts: ClaimOptions = {},
): Promise<ClaimResult> {
  const file = baseName(typeof item === 'string' ? item : item.file);
  const box = maildir(layout, owner);
  const src = join(box.new, file);
  const dest = join(box.cur, readName(file));
  try {
    await link(src, dest);
  } catch (err) {
    if (isErrno(err, 'ENOENT')) return { status: 'already_claimed' };
    if (isErrno(err, 'EEXIST')) {
      // Claimed before: what is in new/ is a second copy (or our own link, after a crash). Drop it.
      await dropCopy(src);
      return { status: 'already_claimed' };
    }
    // A filesystem that refuses hard links here (protected_hardlinks on another user's file):
    // rename as Maildir readers always have, without the guard against a second copy.
    if (!isErrno(err, 'EPERM')) throw err;
    try {
      await rename(src, dest);
    } catch (e) {
      if (isErrno(e, 'ENOENT')) return { status: 'already_claimed' };
      throw e;
    }
  }
  await opts.afterLink?.();
  // Claimed the instant the link returned; a copy left in new/ is dropped by the next reader.
  await dropCopy(src);
  const m = typeof item === 'string' ? undefined : item.message;
  audit(layout, {
    event: 'message_claimed',
    agent: owner,
    file,
    ...(m ? { id: m.id, from: m.from, to: m.to, kind: m.kind } : {}),
  });
  return { status: 'claimed', path: dest };
}

/** Removes a new/ copy of a claimed message; another claimer or reader may have done it first. */
async function dropCopy(path: string): Promise<void> {
  await unlink(path).catch(() => undefined);
}
