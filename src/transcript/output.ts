import { linkSync, readdirSync, readFileSync, renameSync, unlinkSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { errorMessage, FlotillaError, isErrno } from '../errors.js';
import { writeFileAtomic } from '../layout/atomic.js';
import { redact } from '../secrets/redact.js';
import type { Layout } from '../layout/layout.js';

export interface WrittenOutput {
  path: string;
  /** Bytes in the file, marker included. */
  bytes: number;
  /** Bytes of the full answer. */
  totalBytes: number;
  truncated: boolean;
}

/** The marker line ending a truncated answer; says where the rest is. */
export function truncationMarker(id: string, keptBytes: number, totalBytes: number): string {
  return `\n\n[flotilla: output truncated to ${keptBytes} of ${totalBytes} bytes — the full text is in the transcript: flotilla transcript ${id}]\n`;
}

/**
 * Cuts `buf` to at most `max` bytes without splitting a UTF-8 character: a cut that would
 * land on a continuation byte (10xxxxxx) moves back to the start of that character.
 */
export function utf8Prefix(buf: Uint8Array, max: number): Uint8Array {
  if (buf.length <= max) return buf;
  let cut = Math.max(0, max);
  while (cut > 0 && (buf[cut]! & 0xc0) === 0x80) cut--;
  return buf.subarray(0, cut);
}

/** How many finished tasks of one agent keep their own answer file; older ones are removed as new ones come. */
export const TASK_OUTPUTS_KEPT = 16;

/**
 * Writes a task's final answer to `output/<id>.md` (§8), atomically so `flotilla output`
 * never reads half of it. Over `maxBytes`, the answer is cut at a character boundary and a
 * marker line is added; the file, marker included, stays within `maxBytes`.
 *
 * With `task`, the answer is written to that task's own file (`output/<id>.tasks/<n>.md`,
 * the returned path) and `output/<id>.md` becomes a second name for it: a waiter for task n
 * reads task n's answer even when the agent has finished another task since.
 */
export function writeOutput(layout: Layout, id: string, text: string, maxBytes: number, task?: number): WrittenOutput {
  if (task === undefined) return writeAnswer(layout.output(id), id, text, maxBytes);
  const written = writeAnswer(layout.taskOutput(id, task), id, text, maxBytes);
  const latest = layout.output(id);
  const tmp = join(dirname(latest), `.${basename(latest)}.${process.pid}.${task}.link`);
  try {
    unlinkSync(tmp);
  } catch {
    /* none left over */
  }
  linkSync(written.path, tmp);
  renameSync(tmp, latest);
  pruneTaskFiles(layout, id, task);
  return written;
}

/** Records how task `task` ended beside its answer, for a waiter that comes after a later task. */
export function writeTaskResult(layout: Layout, id: string, result: { task: number }): void {
  writeFileAtomic(layout.taskResult(id, result.task), JSON.stringify(result) + '\n');
}

/** How task `task` ended, from its result file; null when there is none (never ended, or pruned). */
export function readTaskResult<T extends { task: number }>(layout: Layout, id: string, task: number): T | null {
  try {
    return JSON.parse(readFileSync(layout.taskResult(id, task), 'utf8')) as T;
  } catch {
    return null;
  }
}

function pruneTaskFiles(layout: Layout, id: string, task: number): void {
  const dir = dirname(layout.taskOutput(id, task));
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return;
  }
  for (const name of names) {
    const n = Number.parseInt(name, 10);
    if (Number.isInteger(n) && n <= task - TASK_OUTPUTS_KEPT)
      try {
        unlinkSync(join(dir, name));
      } catch {
        /* gone */
      }
  }
}

function writeAnswer(path: string, id: string, text: string, maxBytes: number): WrittenOutput {
  // A secret value this process holds never reaches the answer file (§11).
  const full = Buffer.from(redact(text));
  if (full.length <= maxBytes) {
    writeFileAtomic(path, full);
    return { path, bytes: full.length, totalBytes: full.length, truncated: false };
  }
  // The marker's length depends on the kept count; measure it with the widest possible count.
  const room = Math.max(0, maxBytes - Buffer.byteLength(truncationMarker(id, full.length, full.length)));
  const kept = utf8Prefix(full, room);
  const data = Buffer.concat([kept, Buffer.from(truncationMarker(id, kept.length, full.length))]);
  writeFileAtomic(path, data);
  return { path, bytes: data.length, totalBytes: full.length, truncated: true };
}

/** Reads a final answer; a missing one is a clear `not-found` error. */
export function readOutput(layout: Layout, id: string): string {
  const path = layout.output(id);
  try {
    return readFileSync(path, 'utf8');
  } catch (err) {
    if (isErrno(err, 'ENOENT')) {
      throw new FlotillaError(
        `no output for '${id}' — it has not finished a task yet, or output.retention_secs removed it (${path})`,
        {
          code: 'not-found',
          cause: err,
        },
      );
    }
    throw new FlotillaError(`cannot read ${path}: ${errorMessage(err)} — check its permissions`, { cause: err });
  }
}
