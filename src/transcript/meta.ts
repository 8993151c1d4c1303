import { readFileSync } from 'node:fs';
import { errorMessage, FlotillaError, isErrno } from '../errors.js';
import { isTerminal } from '../fleet/record.js';
import { writeFileAtomic } from '../layout/atomic.js';
import { redactValue } from '../secrets/redact.js';
import type { Layout } from '../layout/layout.js';
import type { TranscriptMeta, TranscriptMetaInput } from './meta-schema.js';
import { parseTranscriptMeta } from './meta-validate.generated.js';

/**
 * The transcript's sidecar `transcripts/<id>.meta.json` (§8): what a person or `collect`
 * wants to know without reading the whole transcript. Written atomically, one writer (the
 * agent's harness, or the reaper for a dead one). Its zod schema is meta-schema.ts; this file
 * checks with the validator generated from it, so `spawn` and `gc` (retention) load no zod.
 */

/** True when the agent behind this sidecar has ended; only such transcripts may be pruned. */
export function isFinishedMeta(meta: TranscriptMeta): boolean {
  return isTerminal(meta.status) || meta.finished_at !== null;
}

/** Validates and writes the sidecar atomically; returns what was written. */
export function writeMeta(layout: Layout, meta: TranscriptMetaInput): TranscriptMeta {
  const result = parseTranscriptMeta(meta);
  if (!result.success) {
    const issue = result.error.issues[0];
    throw new FlotillaError(
      `invalid transcript metadata for '${meta.agent_id}' (${issue?.path || 'root'}: ${issue?.message ?? 'invalid'}) — this is a bug in Flotilla`,
    );
  }
  const parsed = result.data;
  writeFileAtomic(layout.transcriptMeta(parsed.agent_id), JSON.stringify(redactValue(parsed), null, 2) + '\n');
  return parsed;
}

/** Reads the sidecar; a missing one is a clear `not-found` error. */
export function readMeta(layout: Layout, id: string): TranscriptMeta {
  const meta = tryReadMeta(layout, id);
  if (meta === null) {
    throw new FlotillaError(
      `transcript metadata for '${id}' is missing — ${layout.transcriptMeta(id)} does not exist; run 'flotilla status' to list agents`,
      {
        code: 'not-found',
      },
    );
  }
  return meta;
}

/** Reads the sidecar, or null when there is none. A corrupt sidecar is an error naming the file. */
export function tryReadMeta(layout: Layout, id: string): TranscriptMeta | null {
  const path = layout.transcriptMeta(id);
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    if (isErrno(err, 'ENOENT')) return null;
    throw new FlotillaError(`cannot read ${path}: ${errorMessage(err)} — check its permissions`, { cause: err });
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (err) {
    throw new FlotillaError(
      `transcript metadata ${path} is not JSON — delete it; the transcript itself is still readable`,
      {
        code: 'meta-corrupt',
        cause: err,
      },
    );
  }
  const parsed = parseTranscriptMeta(json);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new FlotillaError(
      `transcript metadata ${path} is invalid (${issue?.path || 'root'}: ${issue?.message ?? 'invalid'}) — delete it; the transcript itself is still readable`,
      { code: 'meta-corrupt' },
    );
  }
  return parsed.data;
}

/** Read, patch, write atomically. Only the sidecar's single writer may call it. */
export function updateMeta(layout: Layout, id: string, patch: Partial<TranscriptMetaInput>): TranscriptMeta {
  const current = readMeta(layout, id);
  return writeMeta(layout, { ...current, ...patch, agent_id: id });
}
