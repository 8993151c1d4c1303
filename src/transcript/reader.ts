import { readFileSync } from 'node:fs';
import { errorMessage, FlotillaError, isErrno } from '../errors.js';
import type { Layout } from '../layout/layout.js';
import {
  TRANSCRIPT_VERSION,
  transcriptEntrySchema,
  transcriptHeaderSchema,
  type TranscriptEntry,
  type TranscriptHeader,
} from './entries.js';

export interface Transcript {
  header: TranscriptHeader;
  entries: TranscriptEntry[];
  /** The file ended without LF: a crash mid-write; that fragment was ignored. */
  torn: boolean;
  /** Lines inside the file that could not be read (1-based line numbers); they were left out. */
  skipped: { line: number; reason: string }[];
}

/** Reads `transcripts/<id>.jsonl`. */
export function readTranscript(layout: Layout, id: string): Transcript {
  return readTranscriptFile(layout.transcript(id), id);
}

export function readTranscriptFile(path: string, id: string): Transcript {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    if (isErrno(err, 'ENOENT')) {
      throw new FlotillaError(
        `transcript for '${id}' is missing — ${path} does not exist (deleted by transcripts.max_files retention, or transcripts were disabled)`,
        { code: 'not-found', cause: err },
      );
    }
    throw new FlotillaError(
      `transcript for '${id}' cannot be read: ${errorMessage(err)} — check the permissions of ${path}`,
      { cause: err },
    );
  }
  return parseTranscript(text, id, path);
}

/**
 * Parses transcript text with LF framing only: a reader never splits on anything but `\n`
 * (U+2028 inside a JSON string is data, not a line break). A last line without its LF is a
 * write torn by a crash and is ignored.
 */
export function parseTranscript(text: string, id: string, where = `transcript of '${id}'`): Transcript {
  const lines = text.split('\n');
  // After the final LF comes either '' (a whole file) or a torn fragment.
  const tail = lines.pop() ?? '';
  const torn = tail.length > 0;
  const first = lines.findIndex((l) => l.length > 0);
  if (first === -1) {
    throw corrupt(id, where, torn ? 'its only line is incomplete (a crash while writing the header)' : 'it is empty');
  }
  const header = parseHeader(lines[first]!, id, where);
  const entries: TranscriptEntry[] = [];
  const skipped: Transcript['skipped'] = [];
  for (let i = first + 1; i < lines.length; i++) {
    const line = lines[i]!;
    // Empty lines fence off a fragment a failed write left behind; they carry nothing.
    if (line.length === 0) continue;
    let json: unknown;
    try {
      json = JSON.parse(line);
    } catch (err) {
      skipped.push({ line: i + 1, reason: `not JSON (${errorMessage(err)})` });
      continue;
    }
    const parsed = transcriptEntrySchema.safeParse(json);
    if (parsed.success) entries.push(parsed.data);
    else
      skipped.push({ line: i + 1, reason: `not a transcript entry (${parsed.error.issues[0]?.message ?? 'invalid'})` });
  }
  return { header, entries, torn, skipped };
}

function parseHeader(line: string, id: string, where: string): TranscriptHeader {
  let json: unknown;
  try {
    json = JSON.parse(line);
  } catch {
    throw corrupt(id, where, 'its first line is not JSON');
  }
  const version = (json as { version?: unknown } | null)?.version;
  if ((json as { type?: unknown } | null)?.type !== 'header')
    throw corrupt(id, where, 'its first line is not a header');
  if (typeof version === 'number' && version > TRANSCRIPT_VERSION) {
    throw new FlotillaError(
      `transcript for '${id}' has format version ${version}; this flotilla reads up to version ${TRANSCRIPT_VERSION} — upgrade flotilla to read it`,
      { code: 'transcript-version' },
    );
  }
  const parsed = transcriptHeaderSchema.safeParse(json);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw corrupt(
      id,
      where,
      `its header is invalid (${issue?.path.join('.') || 'header'}: ${issue?.message ?? 'invalid'})`,
    );
  }
  return parsed.data;
}

function corrupt(id: string, where: string, what: string): FlotillaError {
  return new FlotillaError(
    `transcript for '${id}' is corrupt: ${what} (${where}) — it cannot be printed or resumed; start a new agent instead`,
    {
      code: 'transcript-corrupt',
    },
  );
}
