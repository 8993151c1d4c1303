import { closeSync, fsyncSync, mkdirSync, openSync, renameSync, unlinkSync, writeSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { isErrno } from '../errors.js';

let counter = 0;

/**
 * Writes a file so a reader sees either the old or the new content, never a torn one:
 * write a unique temp file (in `tmpDir`, default beside the target), fsync, rename.
 */
export function writeFileAtomic(path: string, data: string | Uint8Array, tmpDir = dirname(path)): void {
  // Random too: two writers in two pid namespaces may share a pid, a millisecond and a count.
  const tmp = join(
    tmpDir,
    `.${basename(path)}.${process.pid}.${Date.now()}.${counter++}.${Math.random().toString(36).slice(2, 8)}.tmp`,
  );
  let fd: number;
  try {
    fd = openSync(tmp, 'wx', 0o644);
  } catch (err) {
    if (!isErrno(err, 'ENOENT')) throw err;
    mkdirSync(tmpDir, { recursive: true });
    fd = openSync(tmp, 'wx', 0o644);
  }
  try {
    const buf = typeof data === 'string' ? Buffer.from(data) : data;
    let off = 0;
    while (off < buf.length) off += writeSync(fd, buf, off, buf.length - off);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  try {
    renameSync(tmp, path);
  } catch (err) {
    try {
      unlinkSync(tmp);
    } catch {
      /* already gone */
    }
    throw err;
  }
}
