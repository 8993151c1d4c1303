import { z } from 'zod';
import type { ToolSpec } from './spec.js';
import type { Tool } from './types.js';

/** list_agents (§6): the agents of the caller's fleet with their state. */
export const listAgentsTool: ToolSpec = {
  name: 'list_agents',
  create({ fleet: ops }) {
    if (!ops) return undefined;
    const tool: Tool<Record<string, never>> = {
      name: 'list_agents',
      description: 'List the agents of your fleet with state, depth, turns and last line. Example: {}',
      inputSchema: z.object({}).strict() as unknown as z.ZodType<Record<string, never>>,
      klass: 'read',
      async execute() {
        const agents = await ops.list();
        if (agents.length === 0) return { output: 'No agents.' };
        return {
          output: agents
            .map((a) => `${a.id}  ${a.status}  depth ${a.depth}  turns ${a.turns}  ${a.lastLine}`)
            .join('\n'),
        };
      },
    };
    return tool as Tool;
  },
};
