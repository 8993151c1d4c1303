import { z } from 'zod';

/** The config's `hooks` section (docs/hooks.md): commands run at an agent's start and end, and the team hooks. */

const hookCommand = z.object({
  command: z.string().min(1).describe('Shell command run with sh -c'),
  timeout_secs: z
    .number()
    .positive()
    .default(30)
    .describe('Kill the hook (and its process group) after this many seconds'),
});

export const hooksSchema = z
  .object({
    start: z.array(hookCommand).default([]).describe('Commands run when any agent starts'),
    stop: z.array(hookCommand).default([]).describe('Commands run once when any agent reaches a terminal state'),
    task_created: z
      .array(hookCommand)
      .default([])
      .describe('TaskCreated: commands run when a task is added to a board'),
    task_completed: z
      .array(hookCommand)
      .default([])
      .describe(
        'TaskCompleted: commands run before a task is marked done; exit 2 refuses it and stderr goes back to the claimant',
      ),
    teammate_idle: z
      .array(hookCommand)
      .default([])
      .describe(
        'TeammateIdle: commands run when a persistent agent goes idle; exit 2 sends stderr back to it as mail, so it keeps working',
      ),
  })
  .prefault({})
  .describe('Config-level lifecycle hooks');
