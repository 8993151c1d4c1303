import { z } from 'zod';
import { boardField, boardOf, refused } from './task-board.js';
import type { ToolSpec } from './spec.js';
import type { Tool } from './types.js';

/** task_update (§15): a claimed task finished, failed or handed back; a created one cancelled. */
const input = z.object({
  id: z.string().min(1),
  action: z
    .enum(['done', 'failed', 'release', 'cancel'])
    .describe(
      "'done' with the result, 'failed' with the reason, 'release' to give it back, 'cancel' (a task you created)",
    ),
  result: z
    .string()
    .optional()
    .describe('The result (done), the reason (failed, cancel) or a note for the next claimant (release)'),
  board: boardField,
});

export const taskUpdateTool: ToolSpec = {
  name: 'task_update',
  paneLine: (i) => `task_update ${i.text('id', '?')} ${i.text('action', '?')}`,
  create({ tasks: ops }) {
    if (!ops) return undefined;
    const tool: Tool<z.infer<typeof input>> = {
      name: 'task_update',
      description:
        "Finish or hand back a task you claimed: action 'done' with the result, 'failed' with the reason, 'release' to give it back; 'cancel' a task you created.",
      inputSchema: input,
      klass: 'fleet',
      inputExample: { id: 't3', action: 'done', result: 'Parser tests added in test/parser.test.ts; all pass.' },
      async execute(i) {
        try {
          const t = await ops.update(boardOf(ops, i.board), i.id, i.action, i.result ?? '');
          return {
            output: `Task ${t.id} is now ${t.status}.`,
            meta: { board: t.board, task: t.id, status: t.status },
          };
        } catch (err) {
          return refused(err, '');
        }
      },
    };
    return tool as Tool;
  },
};
