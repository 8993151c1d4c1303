import { createHash } from 'node:crypto';
import { closeSync, fstatSync, openSync, readFileSync, readSync, renameSync, writeFileSync } from 'node:fs';
import { isErrno } from '../errors.js';
import type { Layout } from '../layout/layout.js';

/**
 * Which of this host's audit lines a bus already holds (docs/decisions-hosts.md "The audit log on
 * the bus"): a cursor, `state/audit-sent.json` = `{file, offset}`, the bytes of `audit.jsonl`
 * known to be on the bus. `file` names the file by a hash of its first line, so a file that
 * was removed and begun again starts over at 0 and its lines get new ids. Every process of
 * the host that ships lines moves it; two that ship at once send some lines twice, which the
 * stream drops by their id (`<file>.<offset>`, fixed by the line's place in the file).
 */

export interface OwedLine {
  /** `<file>.<offset>`: the same line always gets the same id. */
  id: string;
  /** The line as written, without its LF. */
  text: string;
  /** Where the next line starts: the cursor once this one is on the bus. */
  end: number;
}

export interface Owed {
  file: string;
  /** Where this read started (the cursor, or 0). */
  from: number;
  lines: OwedLine[];
  /** Where this read stopped: past the lines above and the ones skipped after them. */
  to: number;
}

interface Cursor {
  file: string;
  offset: number;
}

/** A line longer than any audit() writes is no audit line (a foreign write): never sent. */
const LINE_MAX = 16 * 1024;

/**
 * The whole lines after the cursor, at most `maxBytes` of them, each a JSON object. A line
 * that is not one (a torn write followed by the next line, a foreign line) is passed over so
 * it never holds up the lines after it; a last line without its LF waits for it.
 */
export function owedLines(layout: Layout, maxBytes = 1 << 20): Owed | null {
  let fd: number;
  try {
    fd = openSync(layout.auditFile, 'r');
  } catch (err) {
    if (isErrno(err, 'ENOENT')) return null;
    throw err;
  }
  try {
    const file = fileId(fd);
    if (!file) return null;
    const cursor = readCursor(layout);
    let from = cursor?.file === file ? cursor.offset : 0;
    const buf = Buffer.alloc(maxBytes);
    let got = readSync(fd, buf, 0, maxBytes, from);
    // A file shorter than the cursor with the same first line was cut back: start over (ids stay distinct by offset).
    if (got === 0 && from > 0 && cursor?.file === file && fstatSync(fd).size < from) {
      from = 0;
      got = readSync(fd, buf, 0, maxBytes, 0);
    }
    const lines: OwedLine[] = [];
    let at = 0;
    for (;;) {
      const lf = buf.indexOf(0x0a, at);
      if (lf < 0 || lf >= got) break;
      const raw = buf.subarray(at, lf);
      const offset = from + at;
      at = lf + 1;
      if (raw.length === 0 || raw.length > LINE_MAX) continue;
      const text = raw.toString('utf8');
      if (isObjectLine(text)) lines.push({ id: `${file}.${offset}`, text, end: from + at });
    }
    // One line longer than the whole window: step over it rather than stall on it.
    if (at === 0 && got === maxBytes) return { file, from, lines: [], to: from + got };
    return { file, from, lines, to: from + at };
  } finally {
    closeSync(fd);
  }
}

/**
 * Moves the cursor on to `offset` of `file` (its lines are on the bus). Never backwards: a
 * slower shipper that read an older cursor leaves the newer one alone (a race between the
 * read and the rename can still move it back; the lines sent again are dropped by id).
 */
export function moveCursor(layout: Layout, file: string, offset: number): void {
  const now = readCursor(layout);
  if (now && now.file === file && now.offset >= offset) return;
  try {
    const tmp = `${layout.auditCursor}.${process.pid}`;
    writeFileSync(tmp, JSON.stringify({ file, offset } satisfies Cursor));
    renameSync(tmp, layout.auditCursor);
  } catch {
    // Not moved: the same lines go again next time, and the stream drops them by id.
  }
}

function readCursor(layout: Layout): Cursor | undefined {
  try {
    const c = JSON.parse(readFileSync(layout.auditCursor, 'utf8')) as Partial<Cursor>;
    return typeof c.file === 'string' && typeof c.offset === 'number' ? { file: c.file, offset: c.offset } : undefined;
  } catch {
    return undefined;
  }
}

/** The file's name on the bus: a hash of its first whole line (null while it has none). */
function fileId(fd: number): string | null {
  const head = Buffer.alloc(LINE_MAX + 1);
  const n = readSync(fd, head, 0, head.length, 0);
  const lf = head.subarray(0, n).indexOf(0x0a);
  if (lf < 0) return n > LINE_MAX ? createHash('sha256').update(head).digest('hex').slice(0, 12) : null;
  return createHash('sha256').update(head.subarray(0, lf)).digest('hex').slice(0, 12);
}

function isObjectLine(text: string): boolean {
  if (!text.startsWith('{')) return false;
  try {
    const v: unknown = JSON.parse(text);
    return typeof v === 'object' && v !== null && !Array.isArray(v);
  } catch {
    return false;
  }
}
