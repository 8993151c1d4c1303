import { z } from 'zod';
import { PRIORITIES, SUMMARY_MAX } from './message.js';

/**
 * The inbox message's frontmatter (§4), the single source of truth for its fields. The keys
 * are snake_case because people and shell scripts write them by hand; unknown keys are ignored
 * so a newer writer never sends an older reader's mail to bad/. Generated from it:
 * `inbox/message.schema.json` (schema-json.ts) and message-validate.generated.ts
 * (tools/gen-validators.mjs), which senders and readers use so they do not load zod.
 */

const MESSAGE_ID = /^[0-9A-Za-z][0-9A-Za-z_-]{7,63}$/;
const ADDRESS = /^[a-zA-Z0-9][a-zA-Z0-9_-]{0,63}$/;
// One line, no control characters: a summary is printed in panes and tables as is.
// eslint-disable-next-line no-control-regex
const ONE_LINE = /^[^\x00-\x1f\x7f]*$/;

const messageId = z
  .string()
  .regex(MESSAGE_ID, 'a message id is 8-64 letters, digits, _ or -, time-sortable')
  .describe('Unique, time-sortable id: 9 base-36 chars of Unix milliseconds + 10 random base-36 chars');
const address = z.string().regex(ADDRESS, "an address is an agent id or 'human'").describe("An agent id or 'human'");

const base = {
  id: messageId,
  from: address.describe(
    "Sender: derived by Flotilla's writers from the sending process's identity (the agent among its ancestors, else 'human'), never by a model; unauthenticated when written raw (inbox/README.md)",
  ),
  to: address.describe("Recipient, already resolved: an agent id or 'human' (never 'parent' or 'root')"),
  summary: z
    .string()
    .min(1)
    .max(SUMMARY_MAX)
    .regex(ONE_LINE, 'the summary must be one line without control characters')
    .describe('One line, at most 200 characters'),
  priority: z
    .enum(PRIORITIES)
    .default('normal')
    .describe('Readers see urgent first, then high, normal, low; then by time'),
  timestamp: z.iso
    .datetime({ offset: true })
    .describe('When it was sent, ISO 8601 (UTC, e.g. 2026-11-22T10:00:00.000Z)'),
  in_reply_to: messageId.optional().describe('Id of the message this answers'),
  broadcast_id: messageId
    .optional()
    .describe(
      'Set on each copy of one broadcast (send --to children|tree|board:NAME|all): the same for every copy, while each copy has its own id',
    ),
};

const terminalStatus = z.enum(['completed', 'failed', 'cancelled', 'timed_out', 'crashed', 'refused', 'lost']);

export const completionUsageSchema = z.object({
  input_tokens: z.number().int().nonnegative(),
  output_tokens: z.number().int().nonnegative(),
  cost_usd: z.number().nonnegative().nullable().optional(),
});

export const messageHeaderSchema = z
  .discriminatedUnion('kind', [
    z.object({ ...base, kind: z.literal('message').describe('Free text between agents or people') }),
    z.object({
      ...base,
      kind: z.literal('system').describe('A notice from Flotilla itself or a person acting for it'),
    }),
    z.object({
      ...base,
      kind: z.literal('completion').describe('The one terminal message of an agent to its parent (or human)'),
      status: terminalStatus.describe('How the task ended'),
      exit_reason: z.string().max(500).nullable().describe('Why it ended (max_turns, budget, signal, …) or null'),
      turns: z.number().int().nonnegative().describe('Model turns used'),
      usage: completionUsageSchema.describe('Tokens (and cost when priced) used by the task'),
      output_path: z.string().nullable().describe('Path of the final answer file (state/output/<id>.md) or null'),
    }),
    z.object({
      ...base,
      kind: z
        .literal('approval_request')
        .describe('An agent asks a person to allow a tool call (answer: flotilla approve/deny)'),
      request_id: messageId.describe('Id to pass to flotilla approve / deny'),
      tool: z.string().min(1).max(200).describe('The tool the agent wants to call'),
    }),
    z.object({
      ...base,
      kind: z
        .literal('secret_request')
        .describe('An agent asks a person for a secret (the value never travels by inbox)'),
      request_id: messageId.describe('Id to pass to flotilla approve / deny'),
      key: z
        .string()
        .regex(
          /^(?:[a-zA-Z0-9][a-zA-Z0-9_.-]{0,63}|[A-Za-z_][A-Za-z0-9_]*)$/,
          'a secret key is 1-64 letters, digits, _ . or -',
        )
        .describe('The secret key name (never its value)'),
      ttl_secs: z
        .number()
        .positive()
        .optional()
        .describe('How long a grant lasts unless the person chooses otherwise (approve --ttl)'),
    }),
  ])
  .describe(
    'Frontmatter of a Flotilla inbox message (protocol: inbox/README.md); the Markdown body follows the closing ---',
  );

export type MessageHeader = z.infer<typeof messageHeaderSchema>;
export type MessageHeaderInput = z.input<typeof messageHeaderSchema>;
