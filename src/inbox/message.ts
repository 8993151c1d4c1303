import { newSortableId } from '../fleet/ids.js';
import { isoTime } from '../iso-time.js';
import type { MessageHeader, MessageHeaderInput } from './message-schema.js';
import { parseMessageHeader } from './message-validate.generated.js';

/**
 * The inbox message (§4): YAML frontmatter + a free Markdown body. The frontmatter's zod
 * schema is in message-schema.ts (the source of truth); this file builds and checks messages
 * with the validator generated from it, so a sender does not load zod (§14).
 */

/** Most urgent first: the order messages are shown to a reader. */
export const PRIORITIES = ['urgent', 'high', 'normal', 'low'] as const;
export type Priority = (typeof PRIORITIES)[number];

/** The largest body a sender may deliver unless `inbox.max_body_bytes` says otherwise (1 MiB). */
export const DEFAULT_MAX_BODY_BYTES = 1_048_576;
export const SUMMARY_MAX = 200;

/** A whole message: its header plus the Markdown body. */
export type InboxMessage = MessageHeader & { body: string };

type DistributiveOmit<T, K extends PropertyKey> = T extends unknown ? Omit<T, K> : never;

/** What a sender supplies; id, timestamp, summary and priority are filled in when absent. */
export type MessageDraft = DistributiveOmit<MessageHeaderInput, 'id' | 'timestamp' | 'summary'> & {
  id?: string;
  timestamp?: string;
  summary?: string;
  body?: string;
};

/**
 * The default summary: the first non-empty line of the body, control characters removed,
 * cut to 200 characters (with an ellipsis when cut).
 */
export function summarize(body: string): string {
  const line =
    body
      .split('\n')
      // eslint-disable-next-line no-control-regex
      .map((l) => l.replace(/[\x00-\x1f\x7f]+/g, ' ').trim())
      .find(Boolean) ?? '';
  const text = line.replace(/^#+\s*/, '') || '(no text)';
  return text.length > SUMMARY_MAX ? text.slice(0, SUMMARY_MAX - 1) + '…' : text;
}

/** A message field that fails the schema: which field, and what is wrong with it. */
export class MessageFieldError extends Error {
  constructor(
    readonly field: string,
    readonly problem: string,
  ) {
    super(`invalid field '${field}': ${problem}`);
    this.name = 'MessageFieldError';
  }
}

/** Checks a header against the schema (unknown keys dropped, defaults filled), or throws MessageFieldError. */
export function checkHeader(data: unknown): MessageHeader {
  const result = parseMessageHeader(data);
  if (result.success) return result.data;
  const issue = result.error.issues[0];
  throw new MessageFieldError(issue?.path || 'frontmatter', issue?.message ?? 'invalid');
}

/** Builds and validates a message (throws MessageFieldError when a field is wrong). */
export function composeMessage(draft: MessageDraft, now = Date.now()): InboxMessage {
  const { body = '', ...fields } = draft;
  const header = checkHeader({
    ...fields,
    id: draft.id ?? newSortableId(now),
    timestamp: draft.timestamp ?? isoTime(new Date(now)),
    summary: draft.summary ?? summarize(body),
  });
  return { ...header, body };
}

// The common fields first, in the order of §4, so files and JSON read the same however they were built.
const FIELD_ORDER = ['id', 'from', 'to', 'kind', 'summary', 'priority', 'timestamp', 'in_reply_to', 'broadcast_id'];

/** A message's header without the body, fields in the order of §4. */
export function headerOf(msg: InboxMessage): MessageHeader {
  const { body: _body, ...header } = msg;
  const rank = (k: string) => (FIELD_ORDER.includes(k) ? FIELD_ORDER.indexOf(k) : FIELD_ORDER.length);
  return Object.fromEntries(Object.entries(header).sort(([a], [b]) => rank(a) - rank(b))) as MessageHeader;
}

/** The message's time in ms: ids start with base-36 milliseconds, else the timestamp. */
export function messageTime(msg: Pick<MessageHeader, 'id' | 'timestamp'>): number {
  const t = Date.parse(msg.timestamp);
  return Number.isNaN(t) ? parseInt(msg.id.slice(0, 9), 36) : t;
}
