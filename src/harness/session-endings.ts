import type { Log } from '../audit/logger.js';
import type { Config } from '../config/schema.js';
import { errorMessage } from '../errors.js';
import type { AgentRecord } from '../fleet/record.js';
import type { HookContext } from '../hooks/run-hooks.js';
import type { Layout } from '../layout/layout.js';
import type { TranscriptWriter } from '../transcript/writer.js';
import { finishAgent } from './finish.js';
import type { SessionDeps } from './session-deps.js';
import type { WorkSlot } from './work-slot.js';

/**
 * What the session calls as a task or the agent ends: the answer's file, the task's
 * completion (§5.5), and the agent's one ending (harness/finish.ts), which the session shows
 * to the pane, which then lets the process exit (§5.9: no terminal record while its harness lives).
 */
export async function sessionEndings(ctx: {
  id: string;
  layout: Layout;
  config: Config;
  transcript: TranscriptWriter | null;
  log: Log;
  slot: WorkSlot;
  hookContext: HookContext;
  /** Stops what runs beside the agent (child supervision, secret leases). */
  stop: (reason: string) => void;
}): Promise<Pick<SessionDeps, 'writeOutput' | 'complete' | 'finish'>> {
  const { layout, config, transcript, log, hookContext } = ctx;
  const [
    { writeOutput, writeTaskResult },
    { sendCompletionOnce },
    { updateMeta },
    { runLifecycleHooks },
    { stopHookOnce },
  ] = await Promise.all([
    import('../transcript/output.js'),
    import('../lifecycle/completion.js'),
    import('../transcript/meta.js'),
    import('../hooks/run-hooks.js'),
    import('../hooks/stop-once.js'),
  ]);
  const answerFile = (id: string, task: number, text: string): string | null => {
    try {
      return writeOutput(layout, id, text, config.output.max_bytes, task).path;
    } catch (err) {
      log.error({ err: errorMessage(err) }, 'output write failed');
      return null;
    }
  };
  const meta = (r: AgentRecord) => {
    if (transcript)
      try {
        updateMeta(layout, r.id, {
          status: r.status,
          exit_reason: r.exitReason,
          finished_at: r.finishedAt,
          turns_used: r.turns,
          usage: r.usage,
        });
      } catch {
        /* logged by the writer */
      }
  };
  return {
    writeOutput: (task, text) => answerFile(ctx.id, task, text),
    complete: async (r, result, text) => {
      try {
        writeTaskResult(layout, r.id, result);
      } catch (err) {
        log.error({ err: errorMessage(err) }, 'task result write failed');
      }
      meta(r);
      await sendCompletionOnce(layout, r, result, { text, maxBodyBytes: config.inbox.max_body_bytes });
    },
    finish: async (r, status, reason, open) => {
      ctx.stop(reason);
      const outputPath = open?.text ? answerFile(r.id, r.task, open.text) : null;
      const ended = await finishAgent({
        layout,
        config,
        record: r,
        status,
        reason,
        log,
        openTask: open ? { text: open.text, outputPath } : null,
        closeTranscript: (e) => {
          transcript?.append({ type: 'end', status: e.status, exit_reason: e.exitReason });
          transcript?.close();
          meta(e);
        },
        runStopHooks: async (s, why) => {
          await stopHookOnce(layout, r.id, () =>
            runLifecycleHooks('stop', config.hooks.stop, { ...hookContext, status: s, exitReason: why }),
          );
        },
      });
      ctx.slot.release();
      return ended;
    },
  };
}
