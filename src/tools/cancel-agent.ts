import { z } from 'zod';
import type { ToolSpec } from './spec.js';
import type { Tool } from './types.js';

/** cancel_agent (§6): end one of the caller's agents and its foreground children. */
const input = z.object({ id: z.string().min(1).describe('Agent id or unique prefix') });

export const cancelAgentTool: ToolSpec = {
  name: 'cancel_agent',
  paneLine: (i) => `cancel_agent ${i.text('id', '?')}`,
  create({ fleet: ops }) {
    if (!ops) return undefined;
    const tool: Tool<z.infer<typeof input>> = {
      name: 'cancel_agent',
      description: 'Cancel one of your agents (and its foreground children). Example: {"id": "worker-7k2m9q"}',
      inputSchema: input,
      klass: 'fleet',
      async execute(i) {
        const { cancelled, notes } = await ops.cancel(i.id);
        const said = cancelled.length ? `Cancelled ${cancelled.join(', ')}.` : `${i.id} had already finished.`;
        return { output: [said, ...notes].join('\n') };
      },
    };
    return tool as Tool;
  },
};
