import {
  appendFileSync,
  closeSync,
  fstatSync,
  mkdirSync,
  openSync,
  readFileSync,
  readSync,
  renameSync,
  statSync,
  truncateSync,
  writeFileSync,
} from 'node:fs';
import { isErrno } from '../errors.js';
import { selfPid } from '../fleet/proc.js';
import type { BoardPaths } from '../layout/layout.js';
import type { TaskStatus } from './task.js';

/**
 * A board's `ended.log` (docs/architecture.md, "Task boards"): one `<status> <id>` line per
 * finished task, appended under the board lock. Read so that `task list` costs the same with
 * 10 finished tasks or 10,000 (docs/design.md §14, §15): the counts are native substring
 * scans of the text, and only the last few lines are split into ids — no per-line objects.
 *
 * That needs each finished task to have exactly one whole line, which the writers keep:
 * - a finished task's line is appended once: a repair appends it only when it is missing;
 * - a writer killed after appending a line but before dropping the task's index entries
 *   leaves that line last, and every writer settles the last line first (board lock held,
 *   `lastLine` + the index work, store.ts): so only the last line can name a task still indexed
 *   as unfinished, and a reader leaves that one id out of the unfinished counts;
 * - a torn last line (a write cut short) is cut off by the next writer; its task's line is
 *   appended whole by the repair that finds the task finished but still indexed.
 */

const FINISHED: readonly TaskStatus[] = ['done', 'failed', 'cancelled'];

export interface EndedSummary {
  counts: { done: number; failed: number; cancelled: number };
  /** The last `recent` finished ids, oldest first. */
  recent: string[];
  /** The id of the last whole line: the one task that may still be indexed as unfinished. */
  last: string | undefined;
}

function readLog(board: BoardPaths): string {
  try {
    return readFileSync(board.endedLog, 'latin1');
  } catch (err) {
    if (isErrno(err, 'ENOENT')) return '';
    throw err;
  }
}

/** Lines of the log's counted part that start with `needle` (given as `\n<status> `). */
function count(text: string, from: number, needle: string): number {
  let n = text.startsWith(needle.slice(1), from) ? 1 : 0;
  for (let at = text.indexOf(needle, from); at !== -1; at = text.indexOf(needle, at + 1)) n++;
  return n;
}

/** A whole line's id, or undefined when it names no finished status (a torn write's remains). */
function idOf(line: string): string | undefined {
  const sp = line.indexOf(' ');
  return sp > 0 && (FINISHED as readonly string[]).includes(line.slice(0, sp)) ? line.slice(sp + 1) : undefined;
}

/**
 * The checkpoint `ended.count`: `<offset> <done> <failed> <cancelled>`, the counts of the
 * log's first `offset` bytes, so a reader scans only what was appended since (at most
 * CHECKPOINT_EVERY bytes). Written by a writer without fsync: a reader trusts it only when it
 * parses and its offset is a line's end within the log, else counts the whole log.
 */
const CHECKPOINT_EVERY = 16_384;
/** Read at least this much of the log's end, for the last few ids. */
const TAIL_BYTES = 4096;

interface Checkpoint {
  offset: number;
  done: number;
  failed: number;
  cancelled: number;
}
const ZERO: Checkpoint = { offset: 0, done: 0, failed: 0, cancelled: 0 };
const checkpointFile = (board: BoardPaths): string => `${board.dir}/ended.count`;

function readCheckpoint(board: BoardPaths): Checkpoint {
  let text: string;
  try {
    text = readFileSync(checkpointFile(board), 'latin1');
  } catch (err) {
    if (isErrno(err, 'ENOENT')) return ZERO;
    throw err;
  }
  const m = /^(\d+) (\d+) (\d+) (\d+)\n$/.exec(text);
  return m ? { offset: Number(m[1]), done: Number(m[2]), failed: Number(m[3]), cancelled: Number(m[4]) } : ZERO;
}

/** The log from byte `from` to its end (latin1: ids and statuses are ASCII), and its size. */
function readFrom(board: BoardPaths, from: number): { text: string; size: number } {
  let fd: number;
  try {
    fd = openSync(board.endedLog, 'r');
  } catch (err) {
    if (isErrno(err, 'ENOENT')) return { text: '', size: 0 };
    throw err;
  }
  try {
    const size = fstatSync(fd).size;
    const at = Math.min(from, size);
    const buf = Buffer.alloc(size - at);
    let got = 0;
    while (got < buf.length) {
      const n = readSync(fd, buf, got, buf.length - got, at + got);
      if (n === 0) break;
      got += n;
    }
    return { text: buf.toString('latin1', 0, got), size };
  } finally {
    closeSync(fd);
  }
}

interface Scan extends EndedSummary {
  /** Where the whole lines end (an absolute offset): the next checkpoint's offset. */
  end: number;
  /** The checkpoint the counts were built on. */
  base: Checkpoint;
}

function scan(board: BoardPaths, recent: number): Scan {
  let base = readCheckpoint(board);
  // One byte before the checkpoint: it must be the newline that ends a line.
  let from = Math.max(0, base.offset - 1);
  let { text, size } = readFrom(board, from);
  if (base.offset > size || (base.offset > 0 && text[0] !== '\n')) {
    base = ZERO;
    from = 0;
    ({ text, size } = readFrom(board, 0));
  }
  if (from > 0 && size - from < TAIL_BYTES) {
    // Too little since the checkpoint for the last few ids: read further back (only for them).
    from = Math.max(0, size - TAIL_BYTES);
    text = readFrom(board, from).text;
  }
  // Whole lines only: a line still being appended is not there yet.
  const whole = text.lastIndexOf('\n') + 1;
  const body = text.slice(0, whole);
  const countFrom = base.offset === 0 ? 0 : base.offset - from;
  const counts = {
    done: base.done + count(body, countFrom, '\ndone '),
    failed: base.failed + count(body, countFrom, '\nfailed '),
    cancelled: base.cancelled + count(body, countFrom, '\ncancelled '),
  };
  // A buffer that starts mid-file starts mid-line: its first line is not one.
  const firstLine = from === 0 ? 0 : body.indexOf('\n') + 1;
  const ids: string[] = [];
  let end = body.length - 1;
  while (end >= firstLine && ids.length < recent) {
    const start = Math.max(firstLine, body.lastIndexOf('\n', end - 1) + 1);
    const id = idOf(body.slice(start, end));
    if (id !== undefined) ids.push(id);
    end = start - 1;
  }
  const lastStart = Math.max(firstLine, body.lastIndexOf('\n', body.length - 2) + 1);
  const last = body.length > firstLine ? idOf(body.slice(lastStart, -1)) : undefined;
  return { counts, recent: ids.reverse(), last, end: from + whole, base };
}

export function readEnded(board: BoardPaths, recent: number): EndedSummary {
  const { counts, recent: ids, last } = scan(board, recent);
  return { counts, recent: ids, last };
}

/** Whether a finished task already has its line (a repair's check; reads the whole log, lock held). */
export function hasEnded(board: BoardPaths, id: string): boolean {
  const text = readLog(board);
  return FINISHED.some((s) => text.startsWith(`${s} ${id}\n`) || text.includes(`\n${s} ${id}\n`));
}

/** Appends a finished task's line (lock held), and moves the checkpoint on every CHECKPOINT_EVERY bytes. */
export function appendEnded(board: BoardPaths, status: TaskStatus, id: string): void {
  mkdirSync(board.dir, { recursive: true });
  appendFileSync(board.endedLog, `${status} ${id}\n`);
  const base = readCheckpoint(board);
  if (statSync(board.endedLog).size - base.offset < CHECKPOINT_EVERY) return;
  const s = scan(board, 0);
  // The host pid: two commands in two pid namespaces may share a namespace-local one.
  const tmp = `${checkpointFile(board)}.${selfPid()}.tmp`;
  writeFileSync(tmp, `${s.end} ${s.counts.done} ${s.counts.failed} ${s.counts.cancelled}\n`);
  renameSync(tmp, checkpointFile(board));
}

/**
 * The last line's id, read from the file's tail (lock held). A torn tail (a write cut short)
 * is cut off first: its task is still indexed as unfinished, and the repair that finds it
 * finished appends its line whole.
 */
export function lastEnded(board: BoardPaths): string | undefined {
  let fd: number;
  try {
    fd = openSync(board.endedLog, 'r');
  } catch (err) {
    if (isErrno(err, 'ENOENT')) return undefined;
    throw err;
  }
  let tail: string;
  let size: number;
  try {
    size = fstatSync(fd).size;
    const buf = Buffer.alloc(Math.min(size, 256));
    readSync(fd, buf, 0, buf.length, size - buf.length);
    tail = buf.toString('latin1');
  } finally {
    closeSync(fd);
  }
  if (!tail.endsWith('\n')) {
    const whole = tail.lastIndexOf('\n') + 1;
    truncateSync(board.endedLog, size - (tail.length - whole));
    tail = tail.slice(0, whole);
  }
  return tail === '' ? undefined : idOf(tail.slice(tail.lastIndexOf('\n', tail.length - 2) + 1, -1));
}
