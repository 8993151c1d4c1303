import { closeSync, openSync, readSync, statSync, watch, type FSWatcher } from 'node:fs';
import { basename, dirname } from 'node:path';
import { errorMessage, isErrno } from '../errors.js';
import { transcriptEntrySchema, transcriptHeaderSchema, type TranscriptEntry, type TranscriptHeader } from './entries.js';

export type TranscriptRecord = TranscriptHeader | TranscriptEntry;

export interface FollowOptions {
  /** Byte offset to start at (default 0: the whole file, header first). */
  offset?: number;
  /**
   * Asked after each drain that found nothing new: true when the agent has ended (or died)
   * and no more lines will come. An `end` entry stops the follow by itself.
   */
  isDone: () => boolean;
  /** A line that is not a transcript record (reported, then skipped). */
  onSkip?: (line: number, reason: string) => void;
  /** Stops following (e.g. Ctrl-C). */
  signal?: AbortSignal;
  /** Fallback poll interval where fs.watch does not wake us (default 250 ms). */
  pollMs?: number;
}

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

/** Parses one transcript line (header or entry); a string says why it is not one. */
export function parseRecordLine(line: string): TranscriptRecord | string {
  let json: unknown;
  try {
    json = JSON.parse(line);
  } catch (err) {
    return `not JSON (${errorMessage(err)})`;
  }
  if ((json as { type?: unknown } | null)?.type === 'header') {
    const h = transcriptHeaderSchema.safeParse(json);
    return h.success ? h.data : `not a transcript header (${h.error.issues[0]?.message ?? 'invalid'})`;
  }
  const e = transcriptEntrySchema.safeParse(json);
  return e.success ? e.data : `not a transcript entry (${e.error.issues[0]?.message ?? 'invalid'})`;
}

/**
 * `flotilla transcript --follow`: calls `onRecord` for every record already in the file and
 * then for each one appended, until the transcript's `end` entry, or until `isDone()` says
 * the agent is gone and the file has nothing more. Woken by fs.watch on the transcripts
 * folder, with a slow poll for filesystems where watching does not work.
 */
export async function followTranscript(path: string, onRecord: (r: TranscriptRecord) => void, opts: FollowOptions): Promise<void> {
  let offset = opts.offset ?? 0;
  let lineNo = 0;
  let ended = false;
  const drain = (): boolean => {
    const r = readNewLines(path, offset);
    if (r.offset < offset) lineNo = 0;
    offset = r.offset;
    for (const line of r.lines) {
      lineNo++;
      if (line.length === 0) continue;
      const rec = parseRecordLine(line);
      if (typeof rec === 'string') {
        opts.onSkip?.(lineNo, rec);
        continue;
      }
      onRecord(rec);
      if (rec.type === 'end') ended = true;
    }
    return r.lines.length > 0;
  };

  await new Promise<void>((resolve) => {
    let watcher: FSWatcher | undefined;
    let timer: NodeJS.Timeout | undefined;
    let stopped = false;
    const stop = (): void => {
      if (stopped) return;
      stopped = true;
      watcher?.close();
      clearTimeout(timer);
      opts.signal?.removeEventListener('abort', stop);
      resolve();
    };
    const tick = (): void => {
      if (stopped) return;
      clearTimeout(timer);
      const grew = drain();
      if (ended) return stop();
      // Read once more after the agent is seen gone: its last lines may have landed in between.
      if (!grew && opts.isDone()) {
        drain();
        return stop();
      }
      timer = setTimeout(tick, opts.pollMs ?? 250);
    };
    try {
      const name = basename(path);
      watcher = watch(dirname(path), { persistent: true }, (_event, file) => {
        if (file === null || file === name) tick();
      });
      watcher.on('error', () => watcher?.close());
    } catch {
      // No watching here (or the folder is missing): the poll alone.
    }
    if (opts.signal?.aborted) return stop();
    opts.signal?.addEventListener('abort', stop, { once: true });
    tick();
  });
}
