import { auditHookRun } from '../hooks/audit-run.js';
import type { LifecycleHook } from '../hooks/schema.js';
import { readRecord } from '../fleet/registry.js';
import type { Layout } from '../layout/layout.js';
import type { Task } from './task.js';

/**
 * The task hooks of §15 (docs/hooks.md "Team hooks"), run by the board's own operations so
 * every door — the CLI, the harness tools, `flotilla mcp` — runs them the same way. They run
 * as the process doing the change: on the host (an agent's sandboxed `flotilla task` goes
 * through its harness's door), in the actor's working folder, with only PATH and FLOTILLA_*.
 */

type Which = 'task_created' | 'task_completed';

async function commandsFor(layout: Layout, which: Which): Promise<readonly LifecycleHook[]> {
  // Most boards have no hooks: the cached config answers without loading the loader (§14).
  const { loadConfigCached } = await import('../config/cached.js');
  return (await loadConfigCached(layout)).config.hooks[which];
}

/** Who the hook runs for: the acting agent (its name, parent, folder), or a person in the project. */
function actor(
  layout: Layout,
  by: string,
): { agentId: string; agentName: string; parentId: string | null; cwd: string } {
  let rec;
  try {
    rec = by === 'human' ? undefined : readRecord(layout, by);
  } catch {
    rec = undefined;
  }
  return rec
    ? { agentId: rec.id, agentName: rec.name, parentId: rec.parentId, cwd: rec.cwd }
    : { agentId: by, agentName: by, parentId: null, cwd: layout.project };
}

async function run(layout: Layout, which: Which, task: Task, by: string): Promise<string | null> {
  const commands = await commandsFor(layout, which);
  if (commands.length === 0) return null;
  const { runTeamHooks } = await import('../hooks/team-hooks.js');
  const event = which === 'task_created' ? 'TaskCreated' : 'TaskCompleted';
  const out = await runTeamHooks(
    event,
    commands,
    {
      ...actor(layout, by),
      board: task.board,
      taskId: task.id,
      onRun: (r) =>
        auditHookRun(layout, by, r, {
          board: task.board,
          task: task.id,
          ...(r.blocked ? { blocked: true } : {}),
        }),
    },
    { board: task.board, task },
  );
  return out.feedback;
}

/** TaskCreated: after the task is on the board; what it answers changes nothing. */
export async function taskCreatedHooks(layout: Layout, task: Task, by: string): Promise<void> {
  await run(layout, 'task_created', task, by);
}

/** TaskCompleted: before a task is marked done; the stderr of a hook that exits 2, which refuses it, else null. */
export function completionGate(layout: Layout, by: string): (task: Task) => Promise<string | null> {
  return (task) => run(layout, 'task_completed', task, by);
}
