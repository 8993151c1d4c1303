import { closeSync, openSync, readSync, statSync } from 'node:fs';
import { isErrno } from '../errors.js';

/**
 * Reads whole LF-terminated lines from `path` starting at `offset`. A final fragment without
 * its LF is left for the next read: the writer appends one line per write(2), so it is
 * either still being written or a crash's torn tail (§8, LF framing; never readline).
 */
export function readNewLines(path: string, offset: number): { lines: string[]; offset: number } {
  let fd: number;
  try {
    fd = openSync(path, 'r');
  } catch (err) {
    if (isErrno(err, 'ENOENT')) return { lines: [], offset };
    throw err;
  }
  try {
    const size = statSync(path).size;
    // A file shorter than where we were was replaced (deleted and recreated): start over.
    const from = size < offset ? 0 : offset;
    if (size === from) return { lines: [], offset: from };
    const buf = Buffer.alloc(size - from);
    let got = 0;
    while (got < buf.length) {
      const n = readSync(fd, buf, got, buf.length - got, from + got);
      if (n === 0) break;
      got += n;
    }
    const data = buf.subarray(0, got);
    const lastLf = data.lastIndexOf(0x0a);
    if (lastLf < 0) return { lines: [], offset: from };
    // Split the bytes, not a decoded string, so a multi-byte character cut by a short read is never mangled.
    const lines = data.subarray(0, lastLf).toString('utf8').split('\n');
    return { lines, offset: from + lastLf + 1 };
  } finally {
    closeSync(fd);
  }
}
