import { basename, dirname, isAbsolute, join, relative, resolve, sep } from 'node:path';
import { isErrno } from '../errors.js';
import type { FileOperations } from './file-operations.js';

/**
 * Where the file tools may write (§6, §10): nowhere inside a protected root (the fleet root
 * `.flotilla/`) unless inside one of the writable exceptions (the agent's own memory dir).
 * Paths are compared after resolving `..` and symlinks, so `a/../.flotilla/state/x` and a
 * symlink pointing into `.flotilla` are both caught. (Hard links cannot be caught this way;
 * the sandbox of §11 is the boundary against a hostile model.)
 */

export interface WriteScope {
  /** Directories no file tool may write into. */
  protectedRoots: readonly string[];
  /** Directories inside a protected root that may still be written (memory dirs). */
  writableWithin: readonly string[];
  /**
   * With the sandbox on (§11): the only directories that may be written at all (cwd, memory
   * dir), the same set a sandboxed command gets, and a file with more than one hard link is
   * refused (a link to a file outside would write through to it).
   */
  writableRoots?: readonly string[];
}

export type WriteCheck = { ok: true; canonical: string } | { ok: false; message: string };

// More links than this in one path means a loop; the kernel's own limit is 40.
const MAX_LINKS = 40;

/**
 * The path as the kernel would write it: symlinks followed (even dangling ones, which a write
 * would create the target of), `..` resolved, and the not-yet-existing tail appended to the
 * real path of its nearest existing ancestor.
 */
export async function canonicalPath(path: string, ops: FileOperations): Promise<string> {
  let current = resolve(path);
  const tail: string[] = [];
  for (let links = 0; ;) {
    try {
      return join(await ops.realpath(current), ...tail);
    } catch (err) {
      if (!isErrno(err, 'ENOENT') && !isErrno(err, 'ENOTDIR')) throw err;
    }
    const link = await ops.lstat(current).catch(() => undefined);
    if (link?.isSymbolicLink) {
      // A dangling symlink: writing through it creates its target, so follow it by hand.
      if (++links > MAX_LINKS) throw new Error(`too many symbolic links resolving ${path}`);
      const target = await ops.readlink(current);
      current = resolve(dirname(current), target);
      continue;
    }
    const parent = dirname(current);
    if (parent === current) return join(current, ...tail);
    tail.unshift(basename(current));
    current = parent;
  }
}

export function isInside(child: string, parent: string): boolean {
  const rel = relative(parent, child);
  return rel === '' || (!rel.startsWith(`..${sep}`) && rel !== '..' && !isAbsolute(rel));
}

/** Decides whether `path` (absolute) may be written, with a refusal written for the model. */
export async function checkWritable(path: string, scope: WriteScope, ops: FileOperations): Promise<WriteCheck> {
  const canonical = await canonicalPath(path, ops);
  const via = canonical === resolve(path) ? '' : ` (it resolves to ${canonical})`;
  if (scope.writableRoots) {
    const roots = await Promise.all(scope.writableRoots.map((r) => canonicalPath(r, ops)));
    if (!roots.some((r) => isInside(canonical, r))) {
      return {
        ok: false,
        message: `Refused to write ${path}${via}: the sandbox lets you write only inside ${scope.writableRoots.join(', ')}. Write your files there.`,
      };
    }
    const links = (await ops.lstat(canonical).catch(() => undefined))?.nlink ?? 1;
    if (links > 1) {
      return {
        ok: false,
        message: `Refused to write ${path}${via}: it has ${links} hard links, so writing it could change a file outside the sandbox. Write a new file instead (delete this one first).`,
      };
    }
  }
  for (const root of scope.protectedRoots) {
    const realRoot = await canonicalPath(root, ops);
    if (!isInside(canonical, realRoot)) continue;
    let inMemory = false;
    for (const allowed of scope.writableWithin) {
      if (isInside(canonical, await canonicalPath(allowed, ops))) inMemory = true;
    }
    if (inMemory) continue;
    const memory = scope.writableWithin.length
      ? ` Only your memory dir may be written there: ${scope.writableWithin.join(', ')}.`
      : '';
    const fleet = basename(root) === '.flotilla' && root === scope.protectedRoots[0];
    return {
      ok: false,
      message: fleet
        ? `Refused to write ${path}${via}: it is inside the fleet root ${root}, which file tools may not change ` +
          `(the fleet's messages, registry and transcripts live there).${memory} To talk to other agents use send_message; ` +
          `write your work files elsewhere in the project.`
        : `Refused to write ${path}${via}: ${root} holds what runs on the host later (hooks, agent definitions, config), ` +
          'so the sandbox keeps it read-only. Ask a person to change it.',
    };
  }
  return { ok: true, canonical };
}
