import { createHash } from 'node:crypto';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { basename, dirname, join, relative, resolve, sep } from 'node:path';
import { isCheckoutTop } from '../layout/git-top.js';

/**
 * Where a path's lease is kept (docs/design.md §16): the repository it belongs to, named by its
 * main checkout's top folder, with the path relative to the top of the checkout it is in — the
 * nearest folder above it with a real `.git` (layout/git-top.ts). So `src/app.ts` in a git
 * worktree and `src/app.ts` in the main checkout are one lease: two agents in separate
 * worktrees of one repository never silently edit the same file (their work would meet as a
 * merge conflict). A submodule is a repository of its own; a path in no repository belongs to
 * the filesystem's root.
 */

const tops = new Map<string, string>();

/**
 * The checkout's top folder for an absolute folder path (cached per process: a `.git` rarely comes or goes mid-run).
 */
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
  /** The repository's main checkout top (a linked worktree's repository's), which keys the leases. */
  checkout: string;
  /** The path relative to the top of the checkout it is in, `/`-separated ('' for the top itself). */
  rel: string;
}

const repositories = new Map<string, string>();

/**
 * A checkout top → the top of its repository's main checkout: a linked worktree's `.git` file
 * names its git dir, whose `commondir` is the repository's. Any other top is its own (a
 * submodule's git dir has no `commondir`; a bare repository's worktrees are keyed by its dir).
 */
export function repositoryTop(top: string): string {
  const hit = repositories.get(top);
  if (hit !== undefined) return hit;
  let repo = top;
  try {
    const dotGit = join(top, '.git');
    if (statSync(dotGit).isFile()) {
      const gitdir = /^gitdir:\s*(.+?)\s*$/m.exec(readFileSync(dotGit, 'utf8'))?.[1];
      if (gitdir) {
        const common = resolve(
          resolve(top, gitdir),
          readFileSync(join(resolve(top, gitdir), 'commondir'), 'utf8').trim(),
        );
        repo = basename(common) === '.git' ? dirname(common) : common;
      }
    }
  } catch {
    repo = top; // no commondir: a submodule, or a worktree whose git dir is gone — its own
  }
  repositories.set(top, repo);
  return repo;
}

/**
 * An absolute path (or glob) → its checkout and relative form. The checkout is found from the
 * nearest folder that can exist: the file's own folder, or a glob's fixed leading part.
 */
export function checkoutPath(abs: string, fixedBase: string = abs): CheckoutPath {
  const isFolder = statSync(fixedBase, { throwIfNoEntry: false })?.isDirectory() === true;
  const top = checkoutTop(isFolder ? fixedBase : nearestFolder(dirname(fixedBase)));
  const rel = relative(top, abs).split(sep).join('/');
  return { checkout: repositoryTop(top), rel };
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
