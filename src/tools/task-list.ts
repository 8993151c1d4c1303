import { z } from 'zod';
import { boardField, boardOf } from './task-board.js';
import type { ToolSpec } from './spec.js';
import type { Tool } from './types.js';

/** task_list (§15): the shared board as the model reads it. */
const input = z.object({ all: z.boolean().optional().describe('Include finished tasks'), board: boardField });

export const taskListTool: ToolSpec = {
  name: 'task_list',
  create({ tasks: ops }) {
    if (!ops) return undefined;
    const tool: Tool<z.infer<typeof input>> = {
      name: 'task_list',
      description:
        'List the shared task board: the unfinished tasks in claim order with status, claimant and what each waits on, the last to finish, and the counts.',
      inputSchema: input,
      klass: 'read',
      inputExample: {},
      async execute(i) {
        return { output: await ops.list(boardOf(ops, i.board), i.all === true) };
      },
    };
    return tool as Tool;
  },
};
