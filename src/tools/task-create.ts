import { z } from 'zod';
import { boardField, boardOf, refused } from './task-board.js';
import type { ToolSpec } from './spec.js';
import type { Tool } from './types.js';

/** task_create (§15): a task added to the shared board for teammates to claim. */
const input = z.object({
  title: z.string().min(1).describe('One line saying what to do'),
  body: z.string().optional().describe('The details: what done looks like'),
  priority: z.enum(['urgent', 'high', 'normal', 'low']).optional(),
  labels: z.array(z.string()).optional(),
  blocked_by: z.array(z.string()).optional().describe('Task ids that must be done first'),
  id: z.string().optional().describe('A chosen id, so other tasks can name it before it exists (default t<n>)'),
  board: boardField,
});

export const taskCreateTool: ToolSpec = {
  name: 'task_create',
  paneLine: (i) => `task_create ${i.text('title', '?')}`,
  create({ tasks: ops }) {
    if (!ops) return undefined;
    const tool: Tool<z.infer<typeof input>> = {
      name: 'task_create',
      description:
        'Add a task to the shared task board for your teammates (or yourself) to claim. Example: {"title": "Write tests for the parser", "blocked_by": ["t1"]}',
      inputSchema: input,
      klass: 'fleet',
      inputExample: { title: 'Write tests for the parser', blocked_by: ['t1'] },
      async execute(i) {
        try {
          const t = await ops.create({
            board: boardOf(ops, i.board),
            title: i.title,
            ...(i.body !== undefined ? { body: i.body } : {}),
            ...(i.priority ? { priority: i.priority } : {}),
            ...(i.labels ? { labels: i.labels } : {}),
            ...(i.blocked_by ? { blockedBy: i.blocked_by } : {}),
            ...(i.id !== undefined ? { id: i.id } : {}),
          });
          return { output: `Added task ${t.id} to board ${t.board}.`, meta: { board: t.board, task: t.id } };
        } catch (err) {
          return refused(err, '');
        }
      },
    };
    return tool as Tool;
  },
};
