import { readdirSync, rmSync, statSync, unlinkSync } from 'node:fs';
import { join } from 'node:path';
import { errorMessage, isErrno } from '../errors.js';
import type { Layout } from '../layout/layout.js';
import { isFinishedMeta, tryReadMeta } from './meta.js';

export interface RetentionOptions {
  /** `transcripts.max_files`: finished transcripts kept, newest first (0 = unlimited). */
  maxFiles: number;
  /** `output.retention_secs`: outputs of finished agents older than this are deleted (0 = keep). */
  outputRetentionSecs: number;
  /** True for an agent that is still alive (from the registry); nothing of it is ever deleted. */
  isLive: (id: string) => boolean;
  /** Milliseconds since the epoch; default `Date.now()`. */
  now?: number;
}

export interface RetentionResult {
  /** Agent ids whose transcript and sidecar were deleted. */
  transcripts: string[];
  /** Agent ids whose output file was deleted. */
  outputs: string[];
  /** Files that could not be read or deleted; retention went on without them. */
  problems: string[];
}

const TRANSCRIPT_EXT = '.jsonl';
const META_EXT = '.meta.json';
const OUTPUT_EXT = '.md';
/** `output/<id>.tasks/`: each task's own answer and result (transcript/output.ts). */
const TASKS_EXT = '.tasks';

/**
 * Prunes old records (§8), run on each spawn: the oldest *finished* transcripts with their
 * sidecars beyond `maxFiles`, and outputs older than `outputRetentionSecs`. A live agent, an
 * agent whose sidecar does not say it finished, and anything unreadable are kept.
 */
export function applyRetention(layout: Layout, opts: RetentionOptions): RetentionResult {
  const result: RetentionResult = { transcripts: [], outputs: [], problems: [] };
  const now = opts.now ?? Date.now();
  if (opts.maxFiles > 0) pruneTranscripts(layout, opts, result);
  if (opts.outputRetentionSecs > 0) pruneOutputs(layout, opts, now, result);
  return result;
}

function pruneTranscripts(layout: Layout, opts: RetentionOptions, result: RetentionResult): void {
  const ids = new Set<string>();
  for (const name of list(layout.transcriptsDir, result)) {
    // Dot-files are writeFileAtomic's temp files, not records.
    if (name.startsWith('.')) continue;
    if (name.endsWith(META_EXT)) ids.add(name.slice(0, -META_EXT.length));
    else if (name.endsWith(TRANSCRIPT_EXT)) ids.add(name.slice(0, -TRANSCRIPT_EXT.length));
  }
  const finished: { id: string; at: number }[] = [];
  for (const id of ids) {
    if (opts.isLive(id)) continue;
    let meta;
    try {
      meta = tryReadMeta(layout, id);
    } catch (err) {
      result.problems.push(errorMessage(err));
      continue;
    }
    // No sidecar: an agent still starting, or one we know nothing about — keep it.
    if (meta === null || !isFinishedMeta(meta)) continue;
    const at = Date.parse(meta.finished_at ?? '') || mtime(layout.transcriptMeta(id)) || 0;
    finished.push({ id, at });
  }
  finished.sort((a, b) => b.at - a.at || (a.id < b.id ? 1 : -1));
  for (const { id } of finished.slice(opts.maxFiles)) {
    // Transcript first, sidecar last: if we die in between, the leftover sidecar still says
    // "finished" and the next run removes it, so no orphan survives.
    if (remove(layout.transcript(id), result) && remove(layout.transcriptMeta(id), result)) result.transcripts.push(id);
  }
}

function pruneOutputs(layout: Layout, opts: RetentionOptions, now: number, result: RetentionResult): void {
  const cutoff = now - opts.outputRetentionSecs * 1000;
  for (const name of list(layout.outputDir, result)) {
    if (!name.startsWith('.') && name.endsWith(TASKS_EXT)) {
      const dir = join(layout.outputDir, name);
      const written = mtime(dir);
      if (opts.isLive(name.slice(0, -TASKS_EXT.length)) || Number.isNaN(written) || written >= cutoff) continue;
      try {
        rmSync(dir, { recursive: true, force: true });
      } catch (err) {
        result.problems.push(`cannot remove ${dir}: ${errorMessage(err)}`);
      }
      continue;
    }
    if (name.startsWith('.') || !name.endsWith(OUTPUT_EXT)) continue;
    const id = name.slice(0, -OUTPUT_EXT.length);
    if (opts.isLive(id)) continue;
    const path = layout.output(id);
    const written = mtime(path);
    if (Number.isNaN(written) || written >= cutoff) continue;
    if (remove(path, result)) result.outputs.push(id);
  }
}

function list(dir: string, result: RetentionResult): string[] {
  try {
    return readdirSync(dir);
  } catch (err) {
    if (!isErrno(err, 'ENOENT')) result.problems.push(`cannot list ${dir}: ${errorMessage(err)}`);
    return [];
  }
}

function mtime(path: string): number {
  try {
    return statSync(path).mtimeMs;
  } catch {
    return Number.NaN;
  }
}

/** Deletes a file; true when it is gone (also when it was already gone). */
function remove(path: string, result: RetentionResult): boolean {
  try {
    unlinkSync(path);
    return true;
  } catch (err) {
    if (isErrno(err, 'ENOENT')) return true;
    result.problems.push(`cannot delete ${path}: ${errorMessage(err)}`);
    return false;
  }
}
