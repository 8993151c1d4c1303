import { createHash } from 'node:crypto';
import { existsSync, statSync } from 'node:fs';
import { dirname, relative, sep } from 'node:path';
import { isCheckoutTop } from '../layout/git-top.js';

/**
 * The checkout a path belongs to (docs/design.md §16): the nearest folder above it with a
 * real `.git` (layout/git-top.ts) — a repository's top folder, or a git worktree's (its `.git`
 * is a file) — so agents in separate worktrees never share a lease. A path in no repository belongs to the
 * filesystem's root. Leases name paths relative to it.
 */

const tops = new Map<string, string>();

/** The checkout's top folder for an absolute folder path (cached per process: a `.git` rarely comes or goes mid-run). */
export function checkoutTop(dir: string): string {
  const hit = tops.get(dir);
  if (hit !== undefined) return hit;
  let top: string;
  if (isCheckoutTop(dir)) top = dir;
  else {
    const up = dirname(dir);
    top = up === dir ? dir : checkoutTop(up);
  }
  tops.set(dir, top);
  return top;
}

export interface CheckoutPath {
  /** The checkout's top folder. */
  checkout: string;
  /** The path relative to it, `/`-separated ('' for the top itself). */
  rel: string;
}

/**
 * An absolute path (or glob) → its checkout and relative form. The checkout is found from the
 * nearest folder that can exist: the file's own folder, or a glob's fixed leading part.
 */
export function checkoutPath(abs: string, fixedBase: string = abs): CheckoutPath {
  const isFolder = statSync(fixedBase, { throwIfNoEntry: false })?.isDirectory() === true;
  const checkout = checkoutTop(isFolder ? fixedBase : nearestFolder(dirname(fixedBase)));
  const rel = relative(checkout, abs).split(sep).join('/');
  return { checkout, rel };
}

function nearestFolder(dir: string): string {
  for (let d = dir; ; d = dirname(d)) {
    if (existsSync(d) || dirname(d) === d) return d;
  }
}

/** The name of a checkout's lease file: a hash of its top folder. */
export function checkoutKey(checkout: string): string {
  return createHash('sha256').update(checkout).digest('hex').slice(0, 16);
}
