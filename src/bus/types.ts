import type { ClaimResult } from '../inbox/claim.js';
import type { DeliverOptions, Delivered } from '../inbox/deliver.js';
import type { MessageDraft } from '../inbox/message.js';
import type { InboxItem } from '../inbox/read.js';

/**
 * The transport boundary (docs/design.md §18): what the fleet's mail goes through. One
 * narrow interface, two implementations: `maildir` (one machine, today's files) and
 * `nats` (JetStream, several machines). Each host keeps its Maildirs as the local spool
 * either way, so the harness, the shell recipe (inbox/README.md) and `status` read mail the
 * same on both; a bus only changes how a message reaches the recipient's spool
 * (docs/decisions.md, "The bus carries mail; the Maildir stays the spool").
 */
export interface Bus {
  /** `maildir`, or the server's URL. */
  readonly url: string;
  readonly kind: 'maildir' | 'nats';
  readonly mail: MailBus;
  /** Can this process reach the bus now? For `status` and `doctor`: never throws. */
  reach(): Promise<BusReach>;
  /** Flushes what is queued and lets go of the connection. */
  close(): Promise<void>;
}

export interface BusReach {
  ok: boolean;
  /** One line: what was reached, or why not and what to do. */
  detail: string;
}

export interface MailBus {
  /**
   * Delivers one message (§4). Resolves once the message is durable: in the recipient's
   * new/ on `maildir`; acknowledged by the stream, or kept in this host's outbox while the
   * bus is unreachable, on `nats` (`queued` says which).
   */
  deliver(draft: MessageDraft, opts?: DeliverOptions): Promise<Delivered & { queued?: boolean }>;
  /** Claims a message in `owner`'s spool: `rename(new/x → cur/x:2,S)`, exactly one claimer wins. */
  claim(owner: string, item: InboxItem | string): Promise<ClaimResult>;
  /**
   * Keeps `owners`' spools fed from the bus until the returned function is called; on
   * `maildir` there is nothing to feed (senders write the spool themselves).
   */
  receive(owners: readonly string[]): Promise<() => Promise<void>>;
  /**
   * Moves what waits on the bus for `owners` into their spools now and returns (a person's
   * `inbox` and `status`: nobody's harness feeds `human`). Gives up quietly when the bus is
   * unreachable or slow; the mail stays on the bus.
   */
  collect(owners: readonly string[]): Promise<void>;
}
