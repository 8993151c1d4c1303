import { closeSync, mkdirSync, openSync } from 'node:fs';
import { dirname } from 'node:path';
import { isErrno } from '../errors.js';

/**
 * Claims a one-time right across processes: creates `path` with O_EXCL. Exactly one caller
 * ever gets true, whichever of the harness, the reaper or a parent's check gets there first.
 */
export function claimOnce(path: string): boolean {
  try {
    closeSync(openSync(path, 'wx', 0o644));
    return true;
  } catch (err) {
    if (isErrno(err, 'EEXIST')) return false;
    if (isErrno(err, 'ENOENT')) {
      mkdirSync(dirname(path), { recursive: true });
      return claimOnce(path);
    }
    throw err;
  }
}
