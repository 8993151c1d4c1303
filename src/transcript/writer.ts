import { closeSync, constants, fstatSync, fsyncSync, ftruncateSync, mkdirSync, openSync, writeSync } from 'node:fs';
import { dirname } from 'node:path';
import { errorMessage, FlotillaError, isErrno } from '../errors.js';
import type { Layout } from '../layout/layout.js';
import {
  TRANSCRIPT_VERSION,
  type NewTranscriptEntry,
  type TranscriptHeader,
  type TranscriptHeaderInput,
} from './entries.js';
import { readTranscriptFile } from './reader.js';
import { redactValue } from '../secrets/redact.js';

/** The file operations a writer uses; tests pass failing ones to simulate a full disk. */
export interface TranscriptFileOps {
  /** Opens for appending, creating the file if needed. */
  open(path: string): number;
  size(fd: number): number;
  write(fd: number, buf: Uint8Array, offset: number, length: number): number;
  truncate(fd: number, length: number): void;
  fsync(fd: number): void;
  close(fd: number): void;
}

const APPEND = constants.O_WRONLY | constants.O_APPEND | constants.O_CREAT;

export const nodeTranscriptOps: TranscriptFileOps = {
  open: (path) => {
    try {
      return openSync(path, APPEND, 0o644);
    } catch (err) {
      // A fleet root whose state/ was never set up (or was removed under us).
      if (!isErrno(err, 'ENOENT')) throw err;
      mkdirSync(dirname(path), { recursive: true });
      return openSync(path, APPEND, 0o644);
    }
  },
  size: (fd) => fstatSync(fd).size,
  write: (fd, buf, offset, length) => writeSync(fd, buf, offset, length),
  truncate: (fd, length) => ftruncateSync(fd, length),
  fsync: (fd) => fsyncSync(fd),
  close: (fd) => closeSync(fd),
};

export interface TranscriptWriterOptions {
  /** Called with every failure; the harness logs it at ERROR and the agent goes on (§8). */
  onError: (err: FlotillaError) => void;
  ops?: TranscriptFileOps;
  now?: () => Date;
  /**
   * fsync after every line (default false). A completed write(2) already survives a crash of
   * the process, which is what the inbox claim needs (§4); fsync also survives power loss, at
   * the cost of a disk flush per line.
   */
  fsync?: boolean;
}

/**
 * Appends entries to `transcripts/<id>.jsonl`: the header first, then one whole line per
 * entry with LF framing. `append` returns only after write(2) has completed, so "the
 * transcript has recorded it" holds when it returns true and the inbox may claim (§4).
 * Failures never throw: they go to `onError` and later appends try again.
 */
export class TranscriptWriter {
  readonly path: string;
  private readonly header: TranscriptHeader;
  private readonly ops: TranscriptFileOps;
  private readonly onError: (err: FlotillaError) => void;
  private readonly now: () => Date;
  private readonly fsync: boolean;
  private fd: number | undefined;
  private size = 0;
  private seq = 0;
  private headerWritten = false;
  /** A torn fragment could not be cut off: start the next line on a fresh line. */
  private needsNewline = false;
  private closed = false;

  constructor(path: string, header: TranscriptHeaderInput, opts: TranscriptWriterOptions) {
    this.path = path;
    this.ops = opts.ops ?? nodeTranscriptOps;
    this.onError = opts.onError;
    this.now = opts.now ?? (() => new Date());
    this.fsync = opts.fsync ?? false;
    this.header = {
      type: 'header',
      version: TRANSCRIPT_VERSION,
      agent_id: header.agent_id,
      def_name: header.def_name,
      parent_id: header.parent_id ?? null,
      model: header.model ?? null,
      cwd: header.cwd ?? null,
      resumed_from: header.resumed_from ?? null,
      created_at: header.created_at ?? this.now().toISOString(),
    };
  }

  /** The seq of the last recorded entry (0 before any). */
  get lastSeq(): number {
    return this.seq;
  }

  /** Writes the header now (otherwise it is written with the first entry). */
  open(): boolean {
    return this.ready();
  }

  /** Records one entry; true when its line is completely written. */
  append(entry: NewTranscriptEntry): boolean {
    if (this.closed) {
      this.onError(
        new FlotillaError(`transcript ${this.path} is closed; entry '${entry.type}' was not recorded`, {
          code: 'transcript-write',
        }),
      );
      return false;
    }
    if (!this.ready()) return false;
    const seq = this.seq + 1;
    // Any secret value this process holds is replaced before the line exists (§11).
    const line = JSON.stringify({ seq, ts: this.now().toISOString(), ...redactValue(entry) });
    if (!this.writeLine(line, `entry ${seq} (${entry.type})`)) return false;
    this.seq = seq;
    return true;
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    if (this.fd === undefined) return;
    try {
      this.ops.close(this.fd);
    } catch (err) {
      this.report('close', err);
    }
    this.fd = undefined;
  }

  /** Opens the file and writes the header if that has not happened yet. */
  private ready(): boolean {
    if (this.fd === undefined) {
      try {
        this.fd = this.ops.open(this.path);
        this.size = this.ops.size(this.fd);
      } catch (err) {
        this.fd = undefined;
        this.report('open', err);
        return false;
      }
      // A file that already has content is ours from before (the same id re-opened): continue it.
      if (this.size > 0 && !this.headerWritten) {
        try {
          const existing = readTranscriptFile(this.path, this.header.agent_id);
          this.seq = existing.entries.at(-1)?.seq ?? 0;
          this.headerWritten = true;
          this.needsNewline = existing.torn;
        } catch (err) {
          this.report('continue', err);
          return false;
        }
      }
    }
    if (!this.headerWritten) {
      if (!this.writeLine(JSON.stringify(this.header), 'header')) return false;
      this.headerWritten = true;
    }
    return true;
  }

  private writeLine(line: string, what: string): boolean {
    const fd = this.fd;
    if (fd === undefined) return false;
    const buf = Buffer.from(`${this.needsNewline ? '\n' : ''}${line}\n`);
    const before = this.size;
    let off = 0;
    try {
      // One write(2) per line; the loop only continues a short write (rare on regular files).
      while (off < buf.length) off += this.ops.write(fd, buf, off, buf.length - off);
      if (this.fsync) this.ops.fsync(fd);
    } catch (err) {
      this.size = before + off;
      if (off > 0) this.cutTornTail(fd, before);
      this.report(`write of ${what}`, err);
      return false;
    }
    this.size = before + buf.length;
    this.needsNewline = false;
    return true;
  }

  /** Removes a partly written line so the file stays whole lines; else fences it off. */
  private cutTornTail(fd: number, length: number): void {
    try {
      this.ops.truncate(fd, length);
      this.size = length;
    } catch {
      this.needsNewline = true;
    }
  }

  private report(what: string, err: unknown): void {
    this.onError(
      new FlotillaError(
        `transcript ${what} failed for ${this.path}: ${errorMessage(err)} — the agent goes on; free disk space to resume recording`,
        { code: 'transcript-write', cause: err },
      ),
    );
  }
}

/** Opens the transcript writer for an agent at `layout.transcript(id)`. */
export function openTranscript(
  layout: Layout,
  header: TranscriptHeaderInput,
  opts: TranscriptWriterOptions,
): TranscriptWriter {
  return new TranscriptWriter(layout.transcript(header.agent_id), header, opts);
}
