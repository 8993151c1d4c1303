import { readFileSync } from 'node:fs';
import { errorMessage, isErrno } from '../errors.js';
import { recordLiveness } from '../fleet/liveness.js';
import type { AgentRecord } from '../fleet/record.js';
import { listRecords, updateRecord } from '../fleet/registry.js';
import type { Layout } from '../layout/layout.js';
import { claimOnce } from '../lifecycle/once.js';
import { tryReadMeta, updateMeta } from '../transcript/meta.js';

/** One finished agent's result as `flotilla collect` hands it over. */
export interface CollectedResult {
  id: string;
  name: string;
  status: AgentRecord['status'];
  exitReason: string | null;
  finishedAt: string | null;
  outputPath: string | null;
  /** The final answer, or null when there is none (no output file, or it was pruned). */
  output: string | null;
  /** Why `output` is null, for the person reading. */
  missing?: string;
  collectedAt: string;
}

/** The marker that says an agent's result was collected; O_EXCL makes it once across processes. */
export function collectMarker(layout: Layout, id: string): string {
  return layout.marker(`${id}.collected`);
}

/**
 * `flotilla collect` (§2): every agent that has ended and whose result nobody collected yet,
 * oldest first, each handed out exactly once — even to two collects running at the same
 * time — and marked collected in its registry record (`collectedAt`) and its transcript
 * sidecar (`collected_at`). Agents still running (or dead but not reaped yet) are skipped,
 * never waited for.
 */
export function collectFinished(layout: Layout, opts: { now?: Date; warn?: (m: string) => void } = {}): CollectedResult[] {
  const at = (opts.now ?? new Date()).toISOString();
  const out: CollectedResult[] = [];
  for (const rec of listRecords(layout)) {
    if (recordLiveness(rec) !== 'ended' || rec.collectedAt) continue;
    if (!claimOnce(collectMarker(layout, rec.id))) continue;
    const outputPath = rec.lastTask?.outputPath ?? layout.output(rec.id);
    let output: string | null = null;
    let missing: string | undefined;
    try {
      output = readFileSync(outputPath, 'utf8');
    } catch (err) {
      missing = isErrno(err, 'ENOENT')
        ? `no final answer was written${rec.exitReason ? ` (${rec.exitReason})` : ''}`
        : `cannot read ${outputPath}: ${errorMessage(err)}`;
    }
    try {
      updateRecord(layout, rec.id, { collectedAt: at });
    } catch (err) {
      opts.warn?.(`could not mark '${rec.id}' collected in the registry: ${errorMessage(err)}`);
    }
    try {
      if (tryReadMeta(layout, rec.id)) updateMeta(layout, rec.id, { collected_at: at });
    } catch (err) {
      opts.warn?.(`could not mark '${rec.id}' collected in its transcript metadata: ${errorMessage(err)}`);
    }
    out.push({
      id: rec.id, name: rec.name, status: rec.status, exitReason: rec.exitReason, finishedAt: rec.finishedAt,
      outputPath: output === null ? null : outputPath, output, ...(missing ? { missing } : {}), collectedAt: at,
    });
  }
  return out;
}

/** How `flotilla collect` prints one result: a header line, then the answer. */
export function formatCollected(r: CollectedResult): string {
  const why = r.exitReason && r.exitReason !== r.status ? ` (${r.exitReason})` : '';
  const head = `━━ ${r.id} · ${r.name} · ${r.status}${why}${r.finishedAt ? ` · finished ${r.finishedAt}` : ''}`;
  const body = r.output === null ? `(${r.missing ?? 'no output'})` : r.output.replace(/\n+$/, '');
  return `${head}\n${body}\n`;
}
