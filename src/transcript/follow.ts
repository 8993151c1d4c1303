import { watch, type FSWatcher } from 'node:fs';
import { basename, dirname } from 'node:path';
import { errorMessage } from '../errors.js';
import { readNewLines } from '../layout/read-lines.js';
import {
  transcriptEntrySchema,
  transcriptHeaderSchema,
  type TranscriptEntry,
  type TranscriptHeader,
} from './entries.js';

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
export async function followTranscript(
  path: string,
  onRecord: (r: TranscriptRecord) => void,
  opts: FollowOptions,
): Promise<void> {
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
