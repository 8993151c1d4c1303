import { z } from 'zod';
import type { Tool } from './types.js';
import type { ToolSpec } from './spec.js';

/** What send_message needs from the fleet: delivery under the agent's own identity. */
export interface SendOperations {
  /**
   * Resolves `to`, delivers with `from` = this agent, returns the message id and the resolved
   * recipient; for a group (a broadcast) the broadcast id, the group and who got a copy.
   */
  send(msg: {
    to: string;
    body: string;
    summary?: string | undefined;
    priority?: 'low' | 'normal' | 'high' | 'urgent' | undefined;
    inReplyTo?: string | undefined;
  }): Promise<{ id: string; to: string; copies?: string[] }>;
}

const input = z.object({
  to: z
    .string()
    .min(1)
    .describe(
      "Recipient: an agent id (or unique prefix), 'parent', 'root' or 'human'; or a group, each of whose running agents gets one copy: 'children', 'tree' (every agent of your tree), 'board:NAME' (the agents working on that task board), 'all'",
    ),
  body: z.string().describe('Markdown text; put large content in a file and send its path'),
  summary: z.string().max(200).optional().describe('One line (default: the first line of the body)'),
  priority: z.enum(['low', 'normal', 'high', 'urgent']).optional(),
  in_reply_to: z.string().optional().describe('Id of the message this answers'),
});

export function createSendMessageTool(ops: SendOperations): Tool<z.infer<typeof input>> {
  return {
    name: 'send_message',
    description:
      'Send a message to another agent\'s inbox (or \'human\'). Example: {"to": "parent", "body": "Found 3 TODOs in src/inbox"}',
    inputSchema: input,
    klass: 'fleet',
    inputExample: { to: 'parent', body: 'Found 3 TODOs in src/inbox' },
    async execute(i) {
      const sent = await ops.send({
        to: i.to,
        body: i.body,
        summary: i.summary,
        priority: i.priority,
        inReplyTo: i.in_reply_to,
      });
      if (sent.copies) {
        return {
          output: `Broadcast ${sent.id} to ${sent.to}: one copy each to ${sent.copies.join(', ')}.`,
          meta: { broadcast_id: sent.id, to: sent.to, copies: sent.copies },
        };
      }
      return { output: `Delivered message ${sent.id} to ${sent.to}.`, meta: { message_id: sent.id, to: sent.to } };
    },
  };
}

export const sendMessageTool: ToolSpec = {
  name: 'send_message',
  paneLine: (i) => {
    const summary = i.optional('summary');
    return `send_message → ${i.text('to', '?')}${summary !== undefined ? `: ${summary}` : ''}`;
  },
  prompt: {
    section: 'messages',
    text: "Use send_message to reach another agent by id, 'parent', 'root' or 'human', or every agent of a group at once ('children', 'tree', 'board:NAME'). Keep messages short; put large content in a file and send its path.",
  },
  create: ({ send }) => send && (createSendMessageTool(send) as Tool),
};
