import { statusWithReason } from '../fleet/record-status.js';
import { z } from 'zod';
import type { Tool } from './types.js';

/**
 * The model-facing fleet tools (§6): spawn_agent, list_agents, wait_for_agents,
 * cancel_agent. What they do to the fleet is injected as `FleetOps`, bound to the calling
 * agent as parent (src/spawn/ops.ts), so the same commands a person runs are used.
 */

export interface AgentSummary {
  id: string;
  name: string;
  status: string;
  depth: number;
  turns: number;
  lastLine: string;
}

export interface WaitResult {
  id: string;
  /** The task waited for (null when the agent's record was gone). */
  task: number | null;
  status: string;
  exitReason: string | null;
  outputPath: string | null;
  /** The final answer, possibly cut. */
  output: string;
}

export interface FleetOps {
  spawn(
    req: {
      prompt: string;
      agent?: string | undefined;
      id?: string | undefined;
      worktree?: boolean | undefined;
      context?: 'none' | 'last_turn' | 'summary' | undefined;
      queue?: boolean | undefined;
    },
    signal: AbortSignal,
  ): Promise<{ id: string; waited?: boolean }>;
  list(): Promise<AgentSummary[]>;
  /** `tasks`: the task to wait for by id (default: each agent's current one). */
  wait(
    ids: string[],
    opts: { any: boolean; timeoutSecs?: number | undefined; signal: AbortSignal; tasks?: Record<string, number> },
  ): Promise<{ results: WaitResult[]; pending: string[] }>;
  cancel(id: string): Promise<string[]>;
}

const spawnInput = z.object({
  prompt: z
    .string()
    .min(1)
    .describe('The whole task for the child: it sees nothing else of your conversation unless context is given'),
  agent: z
    .string()
    .optional()
    .describe("Definition name (see list in 'flotilla agents list'); default: the general agent"),
  id: z.string().optional().describe('Choose the child id (letters, digits, _ -)'),
  worktree: z.boolean().optional().describe('Give the child its own git worktree and branch'),
  wait: z.boolean().optional().describe('Block until the child finishes and return its answer'),
  context: z
    .enum(['none', 'last_turn', 'summary'])
    .optional()
    .describe('What of your conversation the child gets (default none)'),
  queue: z
    .boolean()
    .optional()
    .describe(
      'When every running slot is busy (limits.max_running), wait in line for one instead of being refused; the call returns once the child has started',
    ),
});
const waitInput = z.object({
  ids: z.array(z.string().min(1)).min(1).describe('Agent ids (or unique prefixes) to wait for'),
  any: z.boolean().optional().describe('Return when the first one finishes'),
  timeout_secs: z.number().positive().optional().describe('Give up waiting after this long (the agents keep running)'),
});

function formatResults(r: { results: WaitResult[]; pending: string[] }): string {
  const parts = r.results.map(
    (x) =>
      `## ${x.id}: ${statusWithReason(x.status, x.exitReason)}\n${x.output.trim() || '(no answer)'}${x.outputPath ? `\n(answer file: ${x.outputPath})` : ''}`,
  );
  if (r.pending.length) parts.push(`Still running: ${r.pending.join(', ')}`);
  return parts.join('\n\n');
}

export function createFleetAgentTools(ops: FleetOps): Tool[] {
  const spawn: Tool<z.infer<typeof spawnInput>> = {
    name: 'spawn_agent',
    description:
      'Start a child agent in its own tmux window for a self-contained task; returns its id at once (or its answer with wait: true). Example: {"prompt": "List TODO comments in src/ with file:line", "agent": "worker"}',
    inputSchema: spawnInput,
    klass: 'fleet',
    inputExample: { prompt: 'List TODO comments in src/ with file:line' },
    async execute(i, ctx) {
      const { id, waited } = await ops.spawn(
        { prompt: i.prompt, agent: i.agent, id: i.id, worktree: i.worktree, context: i.context, queue: i.queue },
        ctx.signal,
      );
      const inLine = waited ? ' after waiting in line for a running slot' : '';
      if (!i.wait)
        return {
          output: `Started ${id}${inLine}. Its result will arrive as a completion message; or call wait_for_agents with ["${id}"].`,
          meta: { child: id },
        };
      // A new agent's first task is task 1.
      return {
        output: formatResults(await ops.wait([id], { any: false, signal: ctx.signal, tasks: { [id]: 1 } })),
        meta: { child: id },
      };
    },
  };
  const list: Tool<Record<string, never>> = {
    name: 'list_agents',
    description: 'List the agents of your fleet with state, depth, turns and last line. Example: {}',
    inputSchema: z.object({}).strict() as unknown as z.ZodType<Record<string, never>>,
    klass: 'read',
    async execute() {
      const agents = await ops.list();
      if (agents.length === 0) return { output: 'No agents.' };
      return {
        output: agents.map((a) => `${a.id}  ${a.status}  depth ${a.depth}  turns ${a.turns}  ${a.lastLine}`).join('\n'),
      };
    },
  };
  const wait: Tool<z.infer<typeof waitInput>> = {
    name: 'wait_for_agents',
    description:
      'Block until the given agents finish and return their answers. Example: {"ids": ["worker-7k2m9q", "worker-p3x8aa"]}',
    inputSchema: waitInput,
    klass: 'fleet',
    async execute(i, ctx) {
      return {
        output: formatResults(
          await ops.wait(i.ids, { any: i.any ?? false, timeoutSecs: i.timeout_secs, signal: ctx.signal }),
        ),
      };
    },
  };
  const cancelInput = z.object({ id: z.string().min(1).describe('Agent id or unique prefix') });
  const cancel: Tool<z.infer<typeof cancelInput>> = {
    name: 'cancel_agent',
    description: 'Cancel one of your agents (and its foreground children). Example: {"id": "worker-7k2m9q"}',
    inputSchema: cancelInput,
    klass: 'fleet',
    async execute(i) {
      const hit = await ops.cancel(i.id);
      return { output: hit.length ? `Cancelled ${hit.join(', ')}.` : `${i.id} had already finished.` };
    },
  };
  return [spawn, list, wait, cancel] as Tool[];
}
