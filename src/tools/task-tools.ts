import { z } from 'zod';
import { FlotillaError } from '../errors.js';
import type { Tool, ToolResult } from './types.js';

/**
 * The task board's tools (docs/design.md §15): task_create, task_list, task_claim,
 * task_update, wait_for_tasks. Their operations are injected, bound to the caller's identity
 * by whoever builds the tools (the harness: its agent; `flotilla mcp`: the client's identity),
 * so a model never says who it is. A refusal (taken, blocked, not yours) comes back as an
 * error result the model can act on: who holds the task, what it waits on.
 */
export interface TaskToolOps {
  create(t: {
    board: string;
    title: string;
    body?: string;
    priority?: 'urgent' | 'high' | 'normal' | 'low';
    labels?: string[];
    blockedBy?: string[];
    id?: string;
  }): Promise<TaskView>;
  list(board: string, all: boolean): Promise<string>;
  /** `id` null: the first claimable task; null back when there is none. */
  claim(board: string, id: string | null): Promise<TaskView | null>;
  update(board: string, id: string, action: 'done' | 'failed' | 'release' | 'cancel', text: string): Promise<TaskView>;
  wait(board: string, timeoutSecs: number | undefined, signal: AbortSignal): Promise<string>;
  /** The board used when a call names none: the caller's own (§15). */
  defaultBoard: string;
}

/** What a tool reports about one task. */
export interface TaskView {
  id: string;
  board: string;
  title: string;
  body: string;
  status: string;
  blocked_by: string[];
  claimed_by: string | null;
  notes: { text: string }[];
}

const board = z.string().optional().describe("The board (default: your team's board)");

const createInput = z.object({
  title: z.string().min(1).describe('One line saying what to do'),
  body: z.string().optional().describe('The details: what done looks like'),
  priority: z.enum(['urgent', 'high', 'normal', 'low']).optional(),
  labels: z.array(z.string()).optional(),
  blocked_by: z.array(z.string()).optional().describe('Task ids that must be done first'),
  id: z.string().optional().describe('A chosen id, so other tasks can name it before it exists (default t<n>)'),
  board,
});

const listInput = z.object({ all: z.boolean().optional().describe('Include finished tasks'), board });

const claimInput = z.object({
  id: z
    .string()
    .optional()
    .describe('The task to claim; omit it to take the first claimable one by priority, then age'),
  board,
});

const updateInput = z.object({
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
  board,
});

const waitInput = z.object({
  timeout_secs: z
    .number()
    .positive()
    .optional()
    .describe('Give up after this many seconds (default: wait until the board drains)'),
  board,
});

/** One task as the model reads it. */
export function describeTask(t: TaskView): string {
  const lines = [`${t.id} [${t.status}${t.claimed_by ? ` by ${t.claimed_by}` : ''}] ${t.title}`];
  if (t.blocked_by.length > 0) lines.push(`blocked by: ${t.blocked_by.join(', ')}`);
  if (t.body) lines.push('', t.body);
  const last = t.notes.at(-1);
  if (last) lines.push('', `note: ${last.text}`);
  return lines.join('\n');
}

/**
 * A refusal as the model reads it: the board's one line without its CLI hint, and the tool
 * call that would help instead.
 */
function refused(err: unknown, hint: string): ToolResult {
  if (!(err instanceof FlotillaError) || err.exitCode !== 1) throw err;
  const line = err.message.split(' — ')[0]!.replace(/^refused: /, '');
  return { output: `Refused: ${line}.${hint ? ` ${hint}` : ''}`, isError: true, meta: { refused: err.code } };
}

export function createTaskTools(ops: TaskToolOps): Tool[] {
  const b = (given: string | undefined): string => given?.trim() || ops.defaultBoard;
  const create: Tool<z.infer<typeof createInput>> = {
    name: 'task_create',
    description:
      'Add a task to the shared task board for your teammates (or yourself) to claim. Example: {"title": "Write tests for the parser", "blocked_by": ["t1"]}',
    inputSchema: createInput,
    klass: 'fleet',
    inputExample: { title: 'Write tests for the parser', blocked_by: ['t1'] },
    async execute(i) {
      try {
        const t = await ops.create({
          board: b(i.board),
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
  const list: Tool<z.infer<typeof listInput>> = {
    name: 'task_list',
    description:
      'List the shared task board: the unfinished tasks in claim order with status, claimant and what each waits on, the last to finish, and the counts.',
    inputSchema: listInput,
    klass: 'read',
    inputExample: {},
    async execute(i) {
      return { output: await ops.list(b(i.board), i.all === true) };
    },
  };
  const claim: Tool<z.infer<typeof claimInput>> = {
    name: 'task_claim',
    description:
      'Claim a task so you alone work on it (omit id for the next claimable one). If someone holds it you are told who. Finish it with task_update.',
    inputSchema: claimInput,
    klass: 'fleet',
    inputExample: { id: 't3' },
    async execute(i) {
      let t: TaskView | null;
      try {
        t = await ops.claim(b(i.board), i.id ?? null);
      } catch (err) {
        return refused(
          err,
          'Call task_claim without an id to take the next claimable task, or task_list to see the board.',
        );
      }
      if (!t)
        return {
          output: `No claimable task on board ${b(i.board)}: everything is claimed, finished, or waiting on unfinished tasks.`,
          meta: { board: b(i.board), task: null },
        };
      return {
        output: `You claimed task ${t.id}.\n\n${describeTask(t)}\n\nWhen it is finished, call task_update with action 'done' and the result.`,
        meta: { board: t.board, task: t.id },
      };
    },
  };
  const update: Tool<z.infer<typeof updateInput>> = {
    name: 'task_update',
    description:
      "Finish or hand back a task you claimed: action 'done' with the result, 'failed' with the reason, 'release' to give it back; 'cancel' a task you created.",
    inputSchema: updateInput,
    klass: 'fleet',
    inputExample: { id: 't3', action: 'done', result: 'Parser tests added in test/parser.test.ts; all pass.' },
    async execute(i) {
      try {
        const t = await ops.update(b(i.board), i.id, i.action, i.result ?? '');
        return { output: `Task ${t.id} is now ${t.status}.`, meta: { board: t.board, task: t.id, status: t.status } };
      } catch (err) {
        return refused(err, '');
      }
    },
  };
  const wait: Tool<z.infer<typeof waitInput>> = {
    name: 'wait_for_tasks',
    description:
      'Wait until the task board drains (nothing claimed, nothing left that could be claimed), then get the counts.',
    inputSchema: waitInput,
    klass: 'fleet',
    inputExample: { timeout_secs: 600 },
    async execute(i, ctx) {
      return { output: await ops.wait(b(i.board), i.timeout_secs, ctx.signal) };
    },
  };
  return [create, list, claim, update, wait] as Tool[];
}
