import { z } from 'zod';
import { formatResults } from './fleet-ops.js';
import type { ToolSpec } from './spec.js';
import type { Tool } from './types.js';

/** wait_for_agents (§6): block until agents finish and hand their answers to the model. */
const input = z.object({
  ids: z.array(z.string().min(1)).min(1).describe('Agent ids (or unique prefixes) to wait for'),
  any: z.boolean().optional().describe('Return when the first one finishes'),
  timeout_secs: z.number().positive().optional().describe('Give up waiting after this long (the agents keep running)'),
});

export const waitForAgentsTool: ToolSpec = {
  name: 'wait_for_agents',
  paneLine: (i) => `wait_for_agents ${Array.isArray(i.raw.ids) ? i.raw.ids.map(String).join(' ') : ''}`.trimEnd(),
  create({ fleet: ops }) {
    if (!ops) return undefined;
    const tool: Tool<z.infer<typeof input>> = {
      name: 'wait_for_agents',
      description:
        'Block until the given agents finish and return their answers. Example: {"ids": ["worker-7k2m9q", "worker-p3x8aa"]}',
      inputSchema: input,
      klass: 'fleet',
      async execute(i, ctx) {
        return {
          output: formatResults(
            await ops.wait(i.ids, { any: i.any ?? false, timeoutSecs: i.timeout_secs, signal: ctx.signal }),
          ),
        };
      },
    };
    return tool as Tool;
  },
};
