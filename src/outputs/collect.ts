import { statusWithReason } from '../fleet/record-status.js';
import { existsSync, readFileSync } from 'node:fs';
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
  /** Set for a task of an agent still open (idle in its window): which task this answer ends. */
  task?: number;
}

/** The marker that says an agent's result was collected; O_EXCL makes it once across processes. */
export function collectMarker(layout: Layout, id: string): string {
  return layout.marker(`${id}.collected`);
}

/** The marker that says task `task` of an agent still open was collected. */
export function taskCollectMarker(layout: Layout, id: string, task: number): string {
  return layout.marker(`${id}.task-${task}.collected`);
}

/**
 * `flotilla collect` (§2): every agent that has ended and whose result nobody collected yet,
 * oldest first, each handed out exactly once — even to two collects running at the same
 * time — and marked collected in its registry record (`collectedAt`) and its transcript
 * sidecar (`collected_at`). An agent still open whose last task finished (an interactive
 * agent idle in its window) hands out that task's answer, once per task (rather than
 * skipping it until it ends); an agent that ends later without a new task does
 * not hand the same answer out again. Tasks still running (and dead agents not reaped yet)
 * are skipped, never waited for.
 */
export function collectFinished(
  layout: Layout,
  opts: { now?: Date; warn?: (m: string) => void } = {},
): CollectedResult[] {
  const at = (opts.now ?? new Date()).toISOString();
  const out: CollectedResult[] = [];
  for (const rec of listRecords(layout)) {
    const liveness = recordLiveness(rec);
    if (liveness === 'live' && rec.lastTask) {
      const task = openTaskResult(layout, rec, rec.lastTask, at);
      if (task) out.push(task);
      continue;
    }
    if (liveness !== 'ended' || rec.collectedAt) continue;
    if (!claimOnce(collectMarker(layout, rec.id))) continue;
    // Its last answer went out while it was open, and it took no task after: nothing new.
    const handedOut =
      rec.lastTask &&
      rec.task === rec.lastTask.task &&
      existsSync(taskCollectMarker(layout, rec.id, rec.lastTask.task));
    const outputPath = rec.lastTask?.outputPath ?? layout.output(rec.id);
    const { output, missing } = handedOut
      ? { output: null, missing: undefined }
      : readAnswer(outputPath, rec.exitReason);
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
    if (handedOut) continue;
    out.push({
      id: rec.id,
      name: rec.name,
      status: rec.status,
      exitReason: rec.exitReason,
      finishedAt: rec.finishedAt,
      outputPath: output === null ? null : outputPath,
      output,
      ...(missing ? { missing } : {}),
      collectedAt: at,
    });
  }
  return out;
}

/** The answer of an open agent's finished task, once per task; null when already collected. */
function openTaskResult(
  layout: Layout,
  rec: AgentRecord,
  last: NonNullable<AgentRecord['lastTask']>,
  at: string,
): CollectedResult | null {
  if (!claimOnce(taskCollectMarker(layout, rec.id, last.task))) return null;
  const outputPath = last.outputPath ?? layout.output(rec.id);
  const { output, missing } = readAnswer(outputPath, last.exitReason);
  return {
    id: rec.id,
    name: rec.name,
    status: last.status,
    exitReason: last.exitReason,
    finishedAt: last.finishedAt,
    outputPath: output === null ? null : outputPath,
    output,
    ...(missing ? { missing } : {}),
    collectedAt: at,
    task: last.task,
  };
}

function readAnswer(outputPath: string, exitReason: string | null): { output: string | null; missing?: string } {
  try {
    return { output: readFileSync(outputPath, 'utf8') };
  } catch (err) {
    return {
      output: null,
      missing: isErrno(err, 'ENOENT')
        ? `no final answer was written${exitReason ? ` (${exitReason})` : ''}`
        : `cannot read ${outputPath}: ${errorMessage(err)}`,
    };
  }
}

/** How `flotilla collect` prints one result: a header line, then the answer. */
export function formatCollected(r: CollectedResult): string {
  const open = r.task !== undefined ? ` · task ${r.task}, agent still open` : '';
  const head = `━━ ${r.id} · ${r.name} · ${statusWithReason(r.status, r.exitReason)}${open}${r.finishedAt ? ` · finished ${r.finishedAt}` : ''}`;
  const body = r.output === null ? `(${r.missing ?? 'no output'})` : r.output.replace(/\n+$/, '');
  return `${head}\n${body}\n`;
}
