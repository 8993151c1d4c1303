import { rename } from 'node:fs/promises';
import { join } from 'node:path';
import { audit } from '../audit/audit.js';
import { isErrno } from '../errors.js';
import type { Layout } from '../layout/layout.js';
import { baseName, maildir } from './maildir.js';
import type { InboxItem } from './read.js';
import { readName } from './read.js';

export type ClaimResult =
  | { status: 'claimed'; path: string }
  /** Someone else renamed it first (or it was never there): not an error. */
  | { status: 'already_claimed' };

/**
 * Claims a message: `rename(new/x → cur/x:2,S)`. rename() is atomic, so among any number
 * of concurrent claimers exactly one wins; the losers get ENOENT, reported as
 * `already_claimed`. The harness claims only after its transcript has recorded the message
 * (§4), so a crash in between re-delivers rather than loses it.
 */
export async function claim(layout: Layout, owner: string, item: InboxItem | string): Promise<ClaimResult> {
  const file = baseName(typeof item === 'string' ? item : item.file);
  const box = maildir(layout, owner);
  const dest = join(box.cur, readName(file));
  try {
    await rename(join(box.new, file), dest);
  } catch (err) {
    if (isErrno(err, 'ENOENT')) return { status: 'already_claimed' };
    throw err;
  }
  const m = typeof item === 'string' ? undefined : item.message;
  audit(layout, {
    event: 'message_claimed',
    agent: owner,
    file,
    ...(m ? { id: m.id, from: m.from, to: m.to, kind: m.kind } : {}),
  });
  return { status: 'claimed', path: dest };
}
