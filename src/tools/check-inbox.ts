import { z } from 'zod';
import type { Tool } from './types.js';
import type { ToolSpec } from './spec.js';

export interface InboxOperations {
  /** Unread messages, wrapped as data; without peek they count as read once recorded. */
  read(peek: boolean): Promise<string>;
}

const input = z.object({ peek: z.boolean().optional().describe('Look without marking read') });

export function createCheckInboxTool(ops: InboxOperations): Tool<z.infer<typeof input>> {
  return {
    name: 'check_inbox',
    description:
      'Read your unread inbox messages now (they also arrive by themselves after each tool call). Example: {"peek": true}',
    inputSchema: input,
    klass: 'read',
    // The messages come framed by inbox/surface.ts, bodies and attributes already escaped.
    framedOutput: true,
    async execute(i) {
      return { output: await ops.read(i.peek ?? false) };
    },
  };
}

export const checkInboxTool: ToolSpec = {
  name: 'check_inbox',
  create: ({ inbox }) => inbox && (createCheckInboxTool(inbox) as Tool),
};
