import { z } from 'zod';
import { formatResults } from './fleet-ops.js';
import type { ToolSpec } from './spec.js';
import type { Tool } from './types.js';

/** spawn_agent (§6): a child agent in its own tmux window, started by the caller as parent. */
const input = z.object({
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

const AGENT_ID = /\b[a-zA-Z0-9][a-zA-Z0-9_-]*-[a-z0-9]{6}\b/;

/** The new agent's id: from the result's meta when the tool gives it, else the first id-shaped word. */
function spawnedId(result: { output: string; meta?: Record<string, unknown> }, oneLine: (s: string) => string): string {
  const meta = result.meta ?? {};
  // spawn_agent's own key is `child`: the answer text (with wait) may name other agents first.
  for (const key of ['child', 'id', 'agentId', 'childId']) {
    const v = meta[key];
    if (typeof v === 'string' && v !== '') return v;
  }
  return AGENT_ID.exec(result.output)?.[0] ?? oneLine(result.output);
}

export const spawnAgentTool: ToolSpec = {
  name: 'spawn_agent',
  // The line needs the new id: it is shown when the call finishes.
  paneLine: () => undefined,
  paneResult: (result, pane) =>
    result.isError ? undefined : [pane.cyan(pane.fit(`spawn_agent → ${spawnedId(result, pane.oneLine)}`))],
  prompt: {
    section: 'delegation',
    text: [
      'You may split work over child agents with the spawn_agent tool (or `spawn-agent "task"` in the shell). Each child is a full agent in its own tmux window.',
      '- Give each child one clear, self-contained task; it does not see your conversation unless you pass context.',
      '- spawn_agent returns the child id at once. Use wait_for_agents with the ids to block until they finish; their results also come back to you as completion messages in your inbox.',
      '- list_agents shows your children and their state; cancel_agent stops one.',
    ].join('\n'),
  },
  create({ fleet: ops }) {
    if (!ops) return undefined;
    const tool: Tool<z.infer<typeof input>> = {
      name: 'spawn_agent',
      description:
        'Start a child agent in its own tmux window for a self-contained task; returns its id at once (or its answer with wait: true). Example: {"prompt": "List TODO comments in src/ with file:line", "agent": "worker"}',
      inputSchema: input,
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
    return tool as Tool;
  },
};
