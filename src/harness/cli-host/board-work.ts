import { readFileSync } from 'node:fs';
import type { Log } from '../../audit/logger.js';
import type { Config } from '../../config/schema.js';
import { errorMessage, FlotillaError } from '../../errors.js';
import type { AgentRecord, TaskResult } from '../../fleet/record.js';
import type { Layout } from '../../layout/layout.js';
import type { BoardPort } from '../session-deps.js';

/**
 * A vendor teammate's side of its board (`auto_claim`, docs/design.md §15): the harness's
 * board port (harness/teammate.ts), driven from outside the CLI. The shim cannot hand its
 * CLI a prompt the way our session does, so a claimed task comes to the CLI as mail from
 * Flotilla — every CLI already takes mail, multi-line bodies included, through its
 * turn-start hook — and the task of the agent's that takes it up is the one whose ending is
 * written onto the board task (docs/decisions.md "Vendor teammates").
 */
export interface VendorTeammate {
  /** The board may have work (its watch fired, a claim was given back): look at the next idle moment. */
  changed(): void;
  /** Writes the ending of the agent task that worked the held board task, once that task has ended. */
  report(now: AgentRecord): Promise<void>;
  /** Claims the next task and mails it to the agent; true when one was claimed. */
  claim(now: AgentRecord): Promise<boolean>;
}

export function vendorTeammate(d: {
  layout: Layout;
  config: Config;
  rec: AgentRecord;
  log: Log;
  board: BoardPort;
}): VendorTeammate {
  const { layout, log, board } = d;
  /** The board task being worked, and the number of the agent's task that works it. */
  let held: { id: string; task: number } | null = null;
  /** Nothing has been looked at yet: a teammate spawned onto a full board starts at once. */
  let dirty = true;

  return {
    changed() {
      dirty = true;
    },

    async report(now) {
      if (!held || !now.lastTask || now.lastTask.task < held.task) return;
      const { id, task } = held;
      held = null;
      dirty = true;
      // That task's own ending, even when another task of the agent's ran after it (a person's line).
      const { readTaskResult } = await import('../../transcript/output.js');
      const ending =
        now.lastTask.task === task ? now.lastTask : (readTaskResult<TaskResult>(layout, now.id, task) ?? now.lastTask);
      try {
        await board.report(id, ending.status, answerOf(ending.outputPath), ending.exitReason);
      } catch (err) {
        log.warn({ err: errorMessage(err), task: id }, 'board task not finished');
        // Still this agent's task: the hook's words came to it as mail (harness/teammate.ts), and
        // the ending of the task that mail starts reports it again.
        if (err instanceof FlotillaError && err.code === 'task-completion-refused') held = { id, task: nextTask(now) };
      }
    },

    async claim(now) {
      if (held || !dirty) return false;
      dirty = false;
      const work = await board.claim().catch((err: unknown) => {
        log.warn({ err: errorMessage(err) }, 'board claim failed');
        return null;
      });
      if (!work) return false;
      held = { id: work.id, task: nextTask(now) };
      const { deliver } = await import('../../inbox/deliver.js');
      await deliver(
        layout,
        {
          from: 'human',
          to: d.rec.id,
          kind: 'system',
          priority: 'high',
          summary: `claimed task ${work.id} from the board`,
          body: work.prompt,
        },
        { maxBodyBytes: d.config.inbox.max_body_bytes },
      );
      return true;
    },
  };
}

/** The number the agent's next task will have (the CLI's turn-start hook opens it, harness/cli-host/hook.ts). */
function nextTask(now: AgentRecord): number {
  return now.lastTask !== null && now.lastTask.task >= now.task ? now.task + 1 : now.task;
}

function answerOf(path: string | null): string {
  try {
    return path ? readFileSync(path, 'utf8').trim() : '';
  } catch {
    return '';
  }
}
