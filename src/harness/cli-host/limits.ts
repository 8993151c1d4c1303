import type { Config } from '../../config/schema.js';
import type { TaskResult } from '../../fleet/record.js';
import { readRecord } from '../../fleet/registry.js';
import type { Layout } from '../../layout/layout.js';
import type { Runtime } from '../../runtimes/index.js';
import { ownUsage } from './inherited.js';
import { endVendorTask } from './task-end.js';
import { updateQuietly } from '../../fleet/registry.js';

/**
 * The fleet's limits for a vendor CLI, with the harness's semantics (§5.9, §11;
 * docs/runtimes.md, "Limits"): the CLI runs its own loop, so the shim counts its model answers
 * from its session file and keeps its clock.
 *
 * - `max_turns`: the task's model answers reach the limit → a tool it asks for is refused (the
 *   pre-tool hook), and unless that answer ends the task the task ends `failed`, reason
 *   `max_turns`; `timeout_secs`: the task has run that long → `timed_out`, reason `timeout`;
 *   the tree's budget spent (checked after each answer, with the usage just read) → `failed`,
 *   reason `budget`. Each stops the CLI's turn as a person would (Escape in its pane), sends the
 *   task's one completion, and leaves the agent idle for its next message; a tool the CLI
 *   still calls for a stopped task is refused by the pre-tool hook.
 * - `idle_timeout_secs`: an agent idle that long ends `completed` (`idle timeout`), as ours.
 * - usage: the CLI's own token counts, read after each answer, feed the record (status, the
 *   dashboard, the tree's budget) while the task runs, not only at its end.
 */
const LIMIT_REASONS = new Set(['max_turns', 'timeout', 'budget']);

/** How long the limit's answer has to end its task itself (a final answer) before the turn is stopped. */
const MAX_TURNS_GRACE_MS = 5_000;

export interface VendorLimits {
  /** The session watch saw a model answer. */
  onModel(): void;
  close(): void;
}

export function enforceLimits(opts: {
  layout: Layout;
  config: Config;
  runtime: Runtime;
  id: string;
  sessionFile(): string | undefined;
  /** Stops the CLI's current turn (Escape in its pane). */
  interrupt(): Promise<void>;
  /** Ends the agent (idle timeout). */
  endAgent(reason: string): void;
  log: { warn(o: object, m: string): void };
}): VendorLimits {
  const { layout, config, runtime, id } = opts;
  let task = -1;
  let taskStart = Date.now();
  let taskTurns = 0;
  let idleSince = Date.now();
  let stopping = false;

  const open = () => {
    const rec = readRecord(layout, id);
    // `starting`: the CLI has not begun the task's turn yet (cli-host/shim.ts); its clock has not started.
    return rec && rec.status !== 'idle' && rec.status !== 'starting' && !(rec.lastTask && rec.lastTask.task >= rec.task)
      ? rec
      : undefined;
  };
  const follow = (): ReturnType<typeof open> => {
    const rec = open();
    if (rec && rec.task !== task) {
      task = rec.task;
      taskStart = Date.now();
      taskTurns = 0;
    }
    return rec;
  };
  const stop = async (status: TaskResult['status'], reason: string, why: string): Promise<void> => {
    if (stopping) return;
    stopping = true;
    try {
      opts.log.warn({ task, reason }, why);
      const ended = await endVendorTask(layout, config, id, { status, text: '', reason });
      if (ended) {
        interrupted = ended.task;
        await opts.interrupt().catch(() => undefined);
      }
    } catch (err) {
      // A full disk, a record gone: said in the log, and the next tick tries again.
      opts.log.warn({ err: String(err), task, reason }, 'could not end the task at its limit');
    } finally {
      stopping = false;
    }
  };

  let interrupted = -1;
  const tick = (): void => {
    const rec = follow();
    // A task a limit ended elsewhere (the pre-tool hook, at max_turns): its turn is stopped once.
    const last = rec ? undefined : readRecord(layout, id)?.lastTask;
    if (last && last.task === task && last.task !== interrupted && LIMIT_REASONS.has(last.exitReason ?? '')) {
      interrupted = last.task;
      void opts.interrupt().catch(() => undefined);
    }
    if (rec) {
      idleSince = Date.now();
      if (Date.now() - taskStart >= rec.timeoutSecs * 1000)
        void stop('timed_out', 'timeout', `task ${rec.task} ran past timeout_secs ${rec.timeoutSecs}`);
      return;
    }
    const secs = config.limits.idle_timeout_secs;
    if (secs > 0 && Date.now() - idleSince >= secs * 1000) opts.endAgent('idle timeout');
  };
  const timer = setInterval(tick, 1000);
  timer.unref();

  return {
    onModel() {
      const rec = follow();
      if (!rec) return;
      taskTurns++;
      const usage = ownUsage(runtime, opts.sessionFile());
      const now = updateQuietly(layout, id, { taskTurns, ...(usage ?? {}) }) ?? rec;
      if (taskTurns >= now.maxTurns) {
        // The limit's answer may be the final one: the turn-end hook then completes the task
        // first. Otherwise (it asked for tools, which the pre-tool hook now refuses) it stops.
        const at = now.task;
        setTimeout(() => {
          if (open()?.task === at) void stop('failed', 'max_turns', `task ${at} reached max_turns ${now.maxTurns}`);
        }, MAX_TURNS_GRACE_MS).unref();
        return;
      }
      void import('../../spawn/budget.js')
        .then(async ({ fleetBudgetRefusal }) => {
          const over = await fleetBudgetRefusal(layout, config, now.rootId, { unreachable: 'local' });
          if (over) await stop('failed', 'budget', over.message);
        })
        .catch((err: unknown) => opts.log.warn({ err: String(err) }, 'could not check the budget'));
    },
    close: () => clearInterval(timer),
  };
}
