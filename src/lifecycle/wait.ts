import { readFileSync } from 'node:fs';
import type { Config } from '../config/schema.js';
import { isTerminal } from '../fleet/record-status.js';
import type { AgentRecord } from '../fleet/record.js';
import { readRecord, resolveAgent } from '../fleet/registry.js';
import type { Layout } from '../layout/layout.js';
import { reconcileDead } from './reconcile.js';
import { sleep } from '../sleep.js';
import type { WaitResult } from '../tools/fleet-ops.js';
import type { TaskResult } from '../fleet/record.js';
import { readTaskResult } from '../transcript/output.js';

/**
 * `flotilla wait` / `wait_for_agents` / `spawn-agent --wait` (§2, §5.5): blocks until the
 * agents' current tasks end — a terminal state, or a persistent agent's answered task — and
 * gives back how each ended with its final answer. Dead harnesses are reaped on the way, so
 * a crashed child ends the wait as `crashed` instead of hanging it.
 *
 * The task waited for is fixed when the wait starts (or given: spawn's first task), and its
 * answer is read from that task's own file, so a persistent agent that has moved on to its
 * next task meanwhile still gives back the answer of the one waited for.
 */

export interface WaitOptions {
  /** Return as soon as one has ended. */
  any?: boolean;
  /** Give up after this long; the rest are returned as `pending`. */
  timeoutMs?: number;
  signal?: AbortSignal;
  /** Cut each answer to this many characters (the full text stays in the output file). */
  maxOutputChars?: number;
  /** Called each time an agent waited for starts waiting for a person's approval. */
  onApproval?: (rec: AgentRecord) => void;
  /** The task to wait for, by agent id (default: the agent's current task when the wait starts). */
  tasks?: Readonly<Record<string, number>>;
}

export interface WaitOutcome {
  results: WaitResult[];
  pending: string[];
}

const POLL_MS = 100;
const RECONCILE_EVERY_MS = 1_000;

/** True when the agent's task `task` (default: its current one) has ended (it may still be alive and idle). */
export function taskEnded(rec: AgentRecord, task = rec.task): boolean {
  return isTerminal(rec.status) || (rec.lastTask !== null && rec.lastTask.task >= task);
}

/** How the agent's task `task` (default: its current one) ended, with its final answer. */
export function waitResult(layout: Layout, rec: AgentRecord, maxOutputChars = Infinity, taskNo = rec.task): WaitResult {
  let task: TaskResult | null = rec.lastTask && rec.lastTask.task === taskNo ? rec.lastTask : null;
  // A later task has ended since: this one's result was kept beside its answer.
  if (!task && rec.lastTask && rec.lastTask.task > taskNo) task = readTaskResult<TaskResult>(layout, rec.id, taskNo);
  const outputPath = task?.outputPath ?? null;
  let output = '';
  if (outputPath) {
    try {
      output = readFileSync(outputPath, 'utf8');
    } catch {
      output = '';
    }
  }
  if (output.length > maxOutputChars)
    output = output.slice(0, maxOutputChars) + `\n… (cut; the whole answer is in ${outputPath})`;
  return {
    id: rec.id,
    task: task?.task ?? null,
    status: task?.status ?? rec.status,
    exitReason: task?.exitReason ?? rec.exitReason,
    outputPath,
    output,
  };
}

export async function waitForAgents(
  layout: Layout,
  config: Config,
  prefixes: readonly string[],
  opts: WaitOptions = {},
): Promise<WaitOutcome> {
  const ids = [...new Set(prefixes.map((p) => resolveAgent(layout, p).id))];
  const deadline = opts.timeoutMs === undefined ? Infinity : Date.now() + opts.timeoutMs;
  const done = new Map<string, WaitResult>();
  const asking = new Set<string>();
  const target = new Map<string, number>(Object.entries(opts.tasks ?? {}));
  let lastReconcile = 0;
  for (;;) {
    if (opts.signal?.aborted)
      throw opts.signal.reason instanceof Error ? opts.signal.reason : new Error('wait was aborted');
    if (Date.now() - lastReconcile >= RECONCILE_EVERY_MS) {
      lastReconcile = Date.now();
      await reconcileDead(layout, config, { ids: ids.filter((id) => !done.has(id)) });
    }
    for (const id of ids) {
      if (done.has(id)) continue;
      const rec = readRecord(layout, id);
      if (!rec) {
        done.set(id, {
          id,
          task: null,
          status: 'failed',
          exitReason: 'its registry record was removed',
          outputPath: null,
          output: '',
        });
        continue;
      }
      if (!target.has(id)) target.set(id, rec.task);
      const task = target.get(id)!;
      if (taskEnded(rec, task)) done.set(id, waitResult(layout, rec, opts.maxOutputChars, task));
      else if (rec.status !== 'waiting_approval') asking.delete(id);
      else if (!asking.has(id)) {
        asking.add(id);
        opts.onApproval?.(rec);
      }
    }
    const pending = ids.filter((id) => !done.has(id));
    if (pending.length === 0 || (opts.any && done.size > 0) || Date.now() >= deadline) {
      return { results: ids.flatMap((id) => (done.has(id) ? [done.get(id)!] : [])), pending };
    }
    await sleep(Math.min(POLL_MS, Math.max(1, deadline - Date.now())), opts.signal);
  }
}
