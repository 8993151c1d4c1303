import { existsSync } from 'node:fs';
import { fleetBus } from '../bus/settings.js';
import { FlotillaError, UsageError } from '../errors.js';
import { parseBroadcastTarget, resolveRecipient, senderIdentity, SYSTEM_KIND_REFUSAL } from '../inbox/address.js';
import { fleetWritable, sendThroughDoor } from '../inbox/door.js';
import { blockingCalls, type FileCalls } from '../inbox/fs-calls.js';
import { headerOf, type InboxMessage, type MessageDraft } from '../inbox/message.js';
import { inboxSettings } from '../inbox/settings.js';
import type { Layout } from '../layout/layout.js';
import type { BroadcastOptions, BroadcastResult } from './broadcast.js';

/**
 * Sending (§4): one function every door shares — `flotilla send`, the harness's door,
 * `send_message` and `flotilla mcp` — so a recipient, a group and a refusal mean the same
 * whoever sends. The top of this file imports only what one delivery needs: `flotilla send`
 * runs on the fast path (§14), and a group's code loads when a group is named.
 */

/** One delivery (`queuedOn`: the bus it waits for, in this host's outbox), or a broadcast's copies. */
export type Sent =
  { kind: 'one'; message: InboxMessage; queuedOn?: string } | { kind: 'broadcast'; result: BroadcastResult };

/**
 * `to` as any door takes it: a group is a broadcast, anything else one resolved delivery
 * (resolveRecipient). `draft.from` is the sender's identity, found by the caller.
 */
export async function sendTo(
  layout: Layout,
  to: string,
  draft: Omit<MessageDraft, 'to' | 'id'>,
  opts: BroadcastOptions,
): Promise<Sent> {
  return (await sendPlan(layout, to, draft.from)).send(draft, opts);
}

/** A send's options: a broadcast's, and for one delivery on maildir its file calls (inbox/fs-calls.ts). */
export type SendOptions = BroadcastOptions & { calls?: FileCalls };

/** A send made ready (sendPlan): everything it needs is loaded and the recipient resolved. */
export interface SendPlan {
  send(draft: Omit<MessageDraft, 'to' | 'id'>, opts: SendOptions): Promise<Sent>;
  /** Lets go of the bus connection (none on maildir), so a command can exit. */
  close(): Promise<void>;
}

/**
 * What a send to `to` from `from` needs, loaded and resolved before any text is read or
 * anything written: the fast bundle of `flotilla send` leaves a group's and the nats bus's
 * code out, and meeting them hands the whole command line to the full CLI (cli/fast.ts),
 * which must find nothing done yet.
 */
export async function sendPlan(layout: Layout, to: string, from: string): Promise<SendPlan> {
  const group = parseBroadcastTarget(to);
  if (group) {
    const { broadcast } = await import('./broadcast.js');
    return {
      send: async (draft, opts) => ({ kind: 'broadcast', result: await broadcast(layout, draft, group, opts) }),
      close: () => Promise.resolve(),
    };
  }
  const bus = await fleetBus(layout);
  // An agent only another host runs is resolved through the fleet's records (§18); maildir loads nothing more.
  const recipient =
    bus.kind === 'maildir'
      ? resolveRecipient(layout, to, from)
      : await (await import('../bus/recipient.js')).resolveAcrossHosts(layout, bus, to, from);
  return {
    send: async (draft, opts) => {
      const d = await bus.mail.deliver({ ...draft, to: recipient } as MessageDraft, {
        maxBodyBytes: opts.maxBodyBytes,
        ...(opts.calls ? { calls: opts.calls } : {}),
      });
      return { kind: 'one', message: d.message, ...(d.queued ? { queuedOn: bus.url } : {}) };
    },
    close: () => bus.close(),
  };
}

/** What send_message reports: the message id and recipient, or the broadcast id and who got a copy. */
export function sentSummary(sent: Sent): { id: string; to: string; copies?: string[] } {
  if (sent.kind === 'one') return { id: sent.message.id, to: sent.message.to };
  return { id: sent.result.broadcastId, to: sent.result.target, copies: sent.result.copies.map((c) => c.to) };
}

/** What a door (or `send --json`) says of a send: the message's header, or the broadcast's copies. */
export function sentReply(sent: Sent): Record<string, unknown> {
  if (sent.kind === 'one') return { ...headerOf(sent.message) };
  return {
    broadcast_id: sent.result.broadcastId,
    target: sent.result.target,
    copies: sent.result.copies.map(headerOf),
  };
}

/** A send as a command asks for it: the text, or where to read it from when none is given. */
export interface CommandSend {
  to: string;
  /** The text given as arguments; undefined: `readBody` reads it (stdin). */
  text: string | undefined;
  /** Reads the text, stopping just past `max` bytes. */
  readBody(max: number): Promise<string>;
  kind: 'message' | 'system';
  priority: 'low' | 'normal' | 'high' | 'urgent';
  summary?: string | undefined;
  inReplyTo?: string | undefined;
}

/** What a command's send did: the door's kind of reply (sentReply), and lines for the person (stderr). */
export interface CommandSent {
  reply: Record<string, unknown>;
  notes: string[];
}

/**
 * A send from a command (`flotilla send`): the sender is who the process's ancestry says,
 * never the arguments or FLOTILLA_DOOR (§4). An agent's command sends through its harness's
 * door in every mode, so what the harness holds is redacted and `from` is its word
 * (docs/security.md "The door"); inside a sandbox the fleet root is read-only and the door
 * is the only way. `layout` is resolved only when the send is made here.
 */
export async function sendFromCommand(layout: () => Layout, req: CommandSend): Promise<CommandSent> {
  const door = process.env.FLOTILLA_DOOR;
  if (door && !fleetWritable(door)) return throughHarness(door, req);
  const fleet = layout();
  const from = senderIdentity(fleet);
  if (from !== 'human') {
    // The harness's own door, whatever FLOTILLA_DOOR says or whether it was wiped (env -i).
    const own = fleet.door(from);
    if (existsSync(own)) return throughHarness(own, req);
    // A harness without a door (a vendor CLI's shim): deliver here, with every value the
    // fleet was ever granted redacted from body and summary (docs/security-trust.md "Redaction").
    const [{ fleetRedactor }, { setFleetRedactor }] = await Promise.all([
      import('../secrets/digests.js'),
      import('../secrets/redact.js'),
    ]);
    setFleetRedactor(fleetRedactor(fleet));
  }
  const settings = await inboxSettings(fleet);
  const max = settings.max_body_bytes;
  // `kind: system` is Flotilla's own word, or a person's acting for it (docs/security-fleet.md "Framing").
  if (req.kind === 'system' && from !== 'human') throw new FlotillaError(SYSTEM_KIND_REFUSAL, { code: 'system-kind' });
  const plan = await sendPlan(fleet, req.to, from);
  // From here on the text is read and the message written: nothing below loads what a fast bundle may leave out.
  const body = await bodyOf(req, max);
  const sent = await plan.send(
    {
      from,
      kind: req.kind,
      priority: req.priority,
      body,
      ...(req.summary !== undefined ? { summary: req.summary } : {}),
      ...(req.inReplyTo !== undefined ? { in_reply_to: req.inReplyTo } : {}),
    },
    // A command's process waits for its send and does nothing else: its file calls block (inbox/fs-calls.ts).
    { maxBodyBytes: max, allWho: settings.broadcast_all, calls: blockingCalls },
  );
  await plan.close();
  if (sent.kind === 'broadcast') return { reply: sentReply(sent), notes: [] };
  const notes: string[] = [];
  if (sent.queuedOn)
    notes.push(
      `the bus ${sent.queuedOn} is unreachable: the message waits in this host's outbox and is sent when it returns`,
    );
  const ended = await endedNote(fleet, sent.message.to);
  if (ended) notes.push(ended);
  return { reply: sentReply(sent), notes };
}

/** The request goes to a harness's door (inbox/door.ts), which delivers it as that agent, redacted. */
async function throughHarness(door: string, req: CommandSend): Promise<CommandSent> {
  const body = await bodyOf(req, 64 * 1_048_576); // the harness applies inbox.max_body_bytes
  const reply = await sendThroughDoor(door, {
    op: 'send',
    to: req.to,
    body,
    kind: req.kind,
    priority: req.priority,
    ...(req.summary !== undefined ? { summary: req.summary } : {}),
    ...(req.inReplyTo !== undefined ? { in_reply_to: req.inReplyTo } : {}),
  });
  return { reply, notes: [] };
}

async function bodyOf(req: CommandSend, max: number): Promise<string> {
  const body = req.text ?? (await req.readBody(max));
  if (!body.trim())
    throw new UsageError("empty message — give the text as arguments or on stdin, e.g. flotilla send human 'done'");
  return body;
}

/**
 * Mail to an agent that is no longer running is kept (a resume reads it), but nobody reads
 * it now: say so instead of a silent success.
 */
async function endedNote(layout: Layout, recipient: string): Promise<string | null> {
  if (recipient === 'human') return null;
  const [{ readRecord }, { recordLiveness }] = await Promise.all([
    import('../fleet/registry.js'),
    import('../fleet/liveness.js'),
  ]);
  let rec;
  try {
    rec = readRecord(layout, recipient);
  } catch {
    return null;
  }
  if (!rec) return null;
  const liveness = recordLiveness(rec);
  if (liveness === 'ended') {
    const why = rec.exitReason && rec.exitReason !== rec.status ? `: ${rec.exitReason}` : '';
    return `${rec.id} has ended (${rec.status}${why}), so no one reads this now; it waits in its inbox, and 'flotilla resume ${rec.id}' continues that agent with it`;
  }
  if (liveness === 'dead')
    return `${rec.id} is not running (its process is gone), so no one reads this now; it waits in its inbox — see 'flotilla status'`;
  return null;
}
