import { z } from 'zod';
import { boardField, boardOf, describeTask, refused, type TaskView } from './task-board.js';
import type { ToolSpec } from './spec.js';
import type { Tool } from './types.js';

/** task_claim (§15): a task the caller alone works on; told who holds it when taken. */
const input = z.object({
  id: z
    .string()
    .optional()
    .describe('The task to claim; omit it to take the first claimable one by priority, then age'),
  board: boardField,
});

export const taskClaimTool: ToolSpec = {
  name: 'task_claim',
  paneLine: (i) => `task_claim ${i.text('id', 'next')}`,
  create({ tasks: ops }) {
    if (!ops) return undefined;
    const tool: Tool<z.infer<typeof input>> = {
      name: 'task_claim',
      description:
        'Claim a task so you alone work on it (omit id for the next claimable one). If someone holds it you are told who. Finish it with task_update.',
      inputSchema: input,
      klass: 'fleet',
      inputExample: { id: 't3' },
      async execute(i) {
        const board = boardOf(ops, i.board);
        let t: TaskView | null;
        try {
          t = await ops.claim(board, i.id ?? null);
        } catch (err) {
          return refused(
            err,
            'Call task_claim without an id to take the next claimable task, or task_list to see the board.',
          );
        }
        if (!t)
          return {
            output: `No claimable task on board ${board}: everything is claimed, finished, or waiting on unfinished tasks.`,
            meta: { board, task: null },
          };
        return {
          output: `You claimed task ${t.id}.\n\n${describeTask(t)}\n\nWhen it is finished, call task_update with action 'done' and the result.`,
          meta: { board: t.board, task: t.id },
        };
      },
    };
    return tool as Tool;
  },
};
