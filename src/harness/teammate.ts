import { mkdirSync, watch, type FSWatcher } from 'node:fs';
import type { Log } from '../audit/logger.js';
import { errorMessage, FlotillaError } from '../errors.js';
import type { Layout } from '../layout/layout.js';
import type { BoardPort } from './session-deps.js';

/**
 * An `auto_claim` agent's side of its board (docs/design.md §15): claim the next claimable
 * task, give the session its prompt, write the run's ending onto the task. The board is
 * watched (a kernel watch of its folder), so an idle teammate hears of a task added, a
 * blocker finished or a claim given back at once; a slow timer covers what no file change
 * announces (a claimant that died without the reaper having reopened its claim yet).
 */

/**
 * The safety net's period: only for claims whose claimant died silently (docs/decisions.md "Teammates watch their
 * board").
 */
const RECHECK_MS = 10_000;

export function boardPort(
  layout: Layout,
  agentId: string,
  boardName: string,
  log: Log,
  maxBodyBytes: number,
): BoardPort {
  const board = layout.board(boardName);
  return {
    async claim() {
      const { claimNext } = await import('../team-store/board.js');
      const task = await claimNext(layout, boardName, agentId);
      return task && { id: task.id, prompt: taskPrompt(task) };
    },
    async report(id, status, text, reason) {
      const { finishTask } = await import('../team-store/board.js');
      const ok = status === 'completed';
      const result = ok
        ? text
        : [`the run ended ${status}${reason && reason !== status ? ` (${reason})` : ''}`, text]
            .filter(Boolean)
            .join('\n\n');
      try {
        await finishTask(layout, boardName, id, agentId, ok ? 'done' : 'failed', result);
      } catch (err) {
        // The TaskCompleted hook kept it open. The board mails a claimant who was not the caller
        // (tasks/board.ts); here the claimant is the caller, and its model never sees what this
        // process is told, so the hook's words go to it as mail: the task is still its own, and
        // the ending of the task that mail starts is reported again (docs/hooks.md "Team hooks").
        if (err instanceof FlotillaError && err.code === 'task-completion-refused') {
          const { deliver } = await import('../inbox/deliver.js');
          await deliver(
            layout,
            {
              from: 'human',
              to: agentId,
              kind: 'system',
              priority: 'high',
              summary: `task ${id}: completion refused by the TaskCompleted hook`,
              body: `${err.message}\n\nTask ${id} is still yours. Do what the hook asks; your final answer is recorded as the task's result again.`,
            },
            { maxBodyBytes },
          );
        }
        throw err;
      }
    },
    watch(onChange) {
      // A burst of writes (a claim is three or four) is one look, 50 ms after it began.
      let pending: NodeJS.Timeout | undefined;
      const changed = (): void => {
        pending ??= setTimeout(() => {
          pending = undefined;
          onChange();
        }, 50);
      };
      let watcher: FSWatcher | undefined;
      try {
        mkdirSync(board.dir, { recursive: true });
        // Recursive: a task added (active/), released or reopened (tasks/), finished (ended.log).
        // Not the lock and its line (`.lock`, `.lock.queue/`): every claim takes them, even one
        // that finds nothing, so idle teammates woken by them would wake each other for ever.
        watcher = watch(board.dir, { recursive: true, persistent: false }, (_event, name) => {
          if (name !== null && String(name).startsWith('.lock')) return;
          changed();
        });
        watcher.on('error', (err) =>
          log.warn({ err: errorMessage(err) }, 'board watch failed; the recheck timer remains'),
        );
      } catch (err) {
        log.warn({ err: errorMessage(err) }, 'board watch could not start; the recheck timer remains');
      }
      const timer = setInterval(onChange, RECHECK_MS);
      timer.unref();
      return () => {
        watcher?.close();
        clearInterval(timer);
        clearTimeout(pending);
      };
    },
  };
}

/** What the model is given for a board task: its title and body, and where the answer goes. */
export function taskPrompt(task: { id: string; board: string; title: string; body: string }): string {
  const body = task.body.trim() ? `\n\n${task.body.trim()}` : '';
  return `Task ${task.id} from the board '${task.board}' (you have claimed it): ${task.title}${body}\n\nYour final answer is recorded as the task's result.`;
}
