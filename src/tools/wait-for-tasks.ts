import { z } from 'zod';
import { boardField, boardOf } from './task-board.js';
import type { ToolSpec } from './spec.js';
import type { Tool } from './types.js';

/** wait_for_tasks (§15): block until the board drains, then report its counts. */
const input = z.object({
  timeout_secs: z
    .number()
    .positive()
    .optional()
    .describe('Give up after this many seconds (default: wait until the board drains)'),
  board: boardField,
});

export const waitForTasksTool: ToolSpec = {
  name: 'wait_for_tasks',
  create({ tasks: ops }) {
    if (!ops) return undefined;
    const tool: Tool<z.infer<typeof input>> = {
      name: 'wait_for_tasks',
      description:
        'Wait until the task board drains (nothing claimed, nothing left that could be claimed), then get the counts.',
      inputSchema: input,
      klass: 'fleet',
      inputExample: { timeout_secs: 600 },
      async execute(i, ctx) {
        return { output: await ops.wait(boardOf(ops, i.board), i.timeout_secs, ctx.signal) };
      },
    };
    return tool as Tool;
  },
};
