import { mkdirSync } from 'node:fs';
import type { Config } from '../config/schema.js';
import type { AgentRecord } from '../fleet/record.js';
import type { InboxMessage } from '../inbox/message.js';
import type { Layout } from '../layout/layout.js';
import { FlotillaError } from '../errors.js';
import { SYSTEM_KIND_REFUSAL } from '../inbox/address.js';

export interface OutgoingMessage {
  to: string;
  body: string;
  summary?: string | undefined;
  priority?: 'low' | 'normal' | 'high' | 'urgent' | undefined;
  kind?: 'message' | 'system' | undefined;
  inReplyTo?: string | undefined;
}

/** Delivery as this agent (§4): `from` is always its id; `to` is resolved from its record. */
export function sendAs(layout: Layout, config: Config, rec: AgentRecord): (m: OutgoingMessage) => Promise<InboxMessage> {
  return async (m) => {
    const [{ deliver }, { resolveRecipient }] = await Promise.all([import('../inbox/deliver.js'), import('../inbox/address.js')]);
    const to = resolveRecipient(layout, m.to, rec.id);
    const d = await deliver(layout, {
      from: rec.id, to, kind: m.kind ?? 'message', body: m.body,
      ...(m.summary ? { summary: m.summary } : {}), ...(m.priority ? { priority: m.priority } : {}), ...(m.inReplyTo ? { in_reply_to: m.inReplyTo } : {}),
    }, { maxBodyBytes: config.inbox.max_body_bytes });
    return d.message;
  };
}

/**
 * Opens the agent's door (inbox/door.ts) for its sandboxed commands' `flotilla send`, and
 * makes the secrets folder exist so every sandbox can hide it (a handoff socket answers
 * whoever connects). Undefined when the socket cannot be made (a path over the Unix socket
 * limit): the commands then cannot send, as before, and the agent still has send_message.
 */
export async function openAgentDoor(layout: Layout, config: Config, rec: AgentRecord, send: (m: OutgoingMessage) => Promise<InboxMessage>): Promise<string | undefined> {
  mkdirSync(layout.secretsDir, { recursive: true, mode: 0o700 });
  const [{ openDoor }, { headerOf }] = await Promise.all([import('../inbox/door.js'), import('../inbox/message.js')]);
  try {
    const door = await openDoor(layout.door(rec.id), config.inbox.max_body_bytes + 64 * 1024, async (req) => {
      // `kind: system` is Flotilla's own word (docs/security.md "Framing"): an agent's command never gets to say it.
      if (req.kind === 'system') throw new FlotillaError(SYSTEM_KIND_REFUSAL, { code: 'system-kind', exitCode: 1 });
      return { ...headerOf(await send({ to: req.to, body: req.body, summary: req.summary, priority: req.priority, kind: 'message', inReplyTo: req.in_reply_to })) };
    });
    return door.path;
  } catch {
    return undefined;
  }
}
