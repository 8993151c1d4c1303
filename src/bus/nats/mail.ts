import type { JsMsg } from '@nats-io/jetstream';
import { audit } from '../../audit/audit.js';
import { prepareMessage, writeMessageFile } from '../../inbox/deliver.js';
import { maildir } from '../../inbox/maildir.js';
import { messageTime } from '../../inbox/message.js';
import type { Layout } from '../../layout/layout.js';
import { outboxName, parseOutboxName, spoolName, type BusNames } from '../names.js';
import { keep, outboxOf, queued, readQueued, sent } from '../outbox.js';
import type { MailBus } from '../types.js';
import { perLink, type Link, type NatsLink } from './link.js';
import type { Reads } from './reads.js';
import { sleep } from '../../sleep.js';
import { ensureStream } from './streams.js';
import { withTimeout } from './timeout.js';

/** How long mail stays de-duplicated by id on the stream (Nats-Msg-Id): far past any outbox retry. */
const DUPLICATE_WINDOW_MS = 60 * 60 * 1000;
const PUBLISH_TIMEOUT_MS = 5_000;
/** How often a process holding queued mail (or feeding a spool) tries the outbox again. */
const RETRY_MS = 1_000;
const SAFE_ID = /^[A-Za-z0-9_-]{1,64}$/;
/** Messages spooled at once by one feed (fewer than the consumer's 256 buffered). */
const SPOOL_WINDOW = 64;
/** How long a person's look (status, inbox) waits for the bus to hand over what is pending. */
const COLLECT_MS = 3_000;

/** The mail half of a `nats://` bus, and what its bus's close and reach need of it. */
export interface NatsMail {
  mail: MailBus;
  /** Sends what the outbox holds (before the connection closes). */
  flush(): Promise<void>;
  /** Stops feeding spools and retrying. */
  stop(): Promise<void>;
  /** How many messages wait in this host's outbox. */
  waiting(): Promise<number>;
}

/**
 * `fleet.bus: nats://host:port` (§18): mail travels on one JetStream stream per fleet,
 * subject `flotilla.<fleet>.mail.<recipient>`, each message published under its id
 * (Nats-Msg-Id, de-duplicated by the stream) after it is kept in this host's outbox. The
 * recipient's harness feeds its Maildir from a durable consumer and acknowledges a message
 * only once the spool holds it under a name fixed by its id, so a redelivery finds it there:
 * the claim stays the Maildir one (link into cur/, which a second copy cannot pass), after the
 * transcript has recorded it (§4).
 */
export function natsMail(layout: Layout, names: BusNames, connection: NatsLink): NatsMail {
  const box = outboxOf(layout);
  let closed = false;
  const stops: (() => Promise<void>)[] = [];
  // Each recipient has one consumer on its own subject; a message leaves once its spool has it.
  const open = perLink(connection, async (link) => {
    await ensureStream(link.jsm, names.mailStream, `flotilla.${names.key}.mail.>`, {
      retention: 'workqueue',
      duplicateWindowMs: DUPLICATE_WINDOW_MS,
    });
    return link;
  });
  // A count needs no stream made: one that is missing holds nothing.
  const bare = () => connection.reads();
  const sender = outboxSender(box, names, open, () => closed);
  const { publish, flush, scheduleFlush } = sender;
  // Back on the server after an outage: send what waited.
  connection.onReconnect(sender.reconnected);

  return {
    mail: {
      async deliver(draft, opts = {}) {
        const now = opts.now ?? Date.now();
        const { message, data } = prepareMessage(draft, opts.maxBodyBytes, now);
        const file = outboxName(messageTime(message), message.id, message.to);
        const path = await keep(box, file, data);
        audit(layout, {
          event: 'message_sent',
          agent: message.from,
          id: message.id,
          from: message.from,
          to: message.to,
          kind: message.kind,
          bus: 'nats',
          ...(message.broadcast_id ? { broadcast_id: message.broadcast_id } : {}),
        });
        const ok = await publish(file, data, path);
        return { message, file, path, ...(ok ? {} : { queued: true }) };
      },
      // Loaded only by a claimer (a harness): the parser it brings (gray-matter, js-yaml) costs a look ~50 ms.
      claim: async (owner, item) => (await import('../../inbox/claim.js')).claim(layout, owner, item),
      async collect(owners) {
        // The common look: nothing queued here and nothing on the bus for them — one request, no consumer made.
        // Unknown (the count's request failed or was slow) is not "nothing": the look goes on to the consumer.
        if ((await queued(box)).length === 0 && (await waitingOn(bare, names, owners))?.size === 0) return;
        const stop = await this.receive(owners);
        try {
          // What this host queued while the bus was away goes first, so the look sees it too.
          await withTimeout(flush(), COLLECT_MS);
          await handedOver(open, names, owners);
        } catch {
          // Unreachable: what waits on the bus stays there for the next look.
        } finally {
          await stop();
        }
      },
      waitingOnBus: async (owners) => (await waitingOn(bare, names, owners)) ?? new Map<string, number>(),
      async receive(owners) {
        let stop = false;
        const loops = owners.map((o) => feed(layout, names, open, o, () => stop || closed, stops));
        // A process feeding a spool also sends what this host's senders left queued (they may have exited).
        scheduleFlush(0);
        const sweep = setInterval(() => scheduleFlush(0), 5 * RETRY_MS);
        sweep.unref();
        return async () => {
          stop = true;
          clearInterval(sweep);
          for (const s of stops.splice(0)) await s().catch(() => undefined);
          await Promise.all(loops);
        };
      },
    },
    flush: () => (connection.opened() ? flush().catch(() => undefined) : Promise.resolve()),
    async stop() {
      sender.cancel();
      closed = true;
      for (const s of stops.splice(0)) await s().catch(() => undefined);
    },
    waiting: async () => (await queued(box)).length,
  };
}

type Opener = () => Promise<Link>;

/**
 * Publishes mail kept in the outbox `box` and sends again what the bus did not take: after a
 * failed publish later sends go straight to the outbox (no timeout each) and one flush is
 * scheduled, retried every RETRY_MS while the bus stays away.
 */
function outboxSender(box: ReturnType<typeof outboxOf>, names: BusNames, open: Opener, closed: () => boolean) {
  let flushing: Promise<void> | null = null;
  let retry: NodeJS.Timeout | undefined;
  // Set when a publish failed: later sends go straight to the outbox instead of each waiting out a timeout.
  let down = false;
  const publish = async (file: string, data: Buffer, path: string, flushing = false): Promise<boolean> => {
    const parsed = parseOutboxName(file);
    if (!parsed) return false;
    if (down && !flushing) {
      scheduleFlush(RETRY_MS);
      return false;
    }
    try {
      const { js } = await open();
      const h = (await import('./client.js')).headers();
      h.set('Flotilla-Time', file.slice(0, file.indexOf('.')));
      await js.publish(names.mailSubject(parsed.to), data, {
        msgID: parsed.id,
        headers: h,
        timeout: PUBLISH_TIMEOUT_MS,
      });
    } catch {
      // Unreachable or slow: the outbox keeps it, a later flush sends it under the same id.
      down = true;
      scheduleFlush(RETRY_MS);
      return false;
    }
    down = false;
    await sent(path);
    return true;
  };

  const flush = (): Promise<void> => {
    flushing ??= (async () => {
      for (const file of await queued(box)) {
        if (closed()) return;
        const data = await readQueued(box, file);
        if (data && !(await publish(file, data, `${box.new}/${file}`, true))) return;
      }
    })().finally(() => {
      flushing = null;
    });
    return flushing;
  };

  function scheduleFlush(ms: number): void {
    if (closed() || retry) return;
    retry = setTimeout(() => {
      retry = undefined;
      void flush().catch(() => scheduleFlush(RETRY_MS));
    }, ms);
    // A sender never stays alive for the retry alone: its mail is safe in the outbox.
    retry.unref();
  }

  return {
    publish,
    flush,
    scheduleFlush,
    reconnected() {
      down = false;
      scheduleFlush(0);
    },
    cancel() {
      if (retry) clearTimeout(retry);
      retry = undefined;
    },
  };
}

/**
 * Feeds `owner`'s spool from its durable consumer until `stopped`, connecting again after the
 * server went away (the stream keeps the mail). Each consumer's closer goes into `stops`.
 */
async function feed(
  layout: Layout,
  names: BusNames,
  open: Opener,
  owner: string,
  stopped: () => boolean,
  stops: (() => Promise<void>)[],
): Promise<void> {
  while (!stopped()) {
    try {
      const { js, jsm } = await open();
      const durable = names.mailConsumer(owner);
      await jsm.consumers.add(names.mailStream, {
        durable_name: durable,
        ack_policy: 'explicit',
        deliver_policy: 'all',
        filter_subject: names.mailSubject(owner),
      });
      const consumer = await js.consumers.get(names.mailStream, durable);
      const messages = await consumer.consume({ max_messages: 256 });
      stops.push(async () => {
        await messages.close();
      });
      // Stopped while connecting: the closer above came too late to be called. Not awaited
      // here: close() settles only once its messages are iterated to the end, by the loop below.
      if (stopped()) void messages.close();
      // Spooled many at a time: each has its own fixed name, and the fsyncs of new/ are shared.
      const inFlight = new Set<Promise<void>>();
      for await (const m of messages) {
        // One that cannot be spooled now (a full disk, a Maildir being remade) comes back in RETRY_MS, and the
        // feed goes on: ending it would leave what it had buffered unacknowledged for the consumer's ack wait.
        const p = spool(layout, owner, m)
          .catch(() => nakQuietly(m))
          .finally(() => inFlight.delete(p));
        inFlight.add(p);
        if (inFlight.size >= SPOOL_WINDOW) await Promise.race(inFlight);
        if (stopped()) break;
      }
      await Promise.allSettled(inFlight);
    } catch {
      // The server went away or the consumer was reset: try again, the stream keeps the mail.
    }
    if (!stopped()) await sleep(RETRY_MS);
  }
}

/** Asks for `m` again in RETRY_MS; a connection closed meanwhile hands it over again by itself. */
function nakQuietly(m: JsMsg): void {
  try {
    m.nak(RETRY_MS);
  } catch {
    // Closed: unacknowledged, it comes back after the consumer's ack wait.
  }
}

async function spool(layout: Layout, owner: string, m: JsMsg): Promise<void> {
  const id = m.headers?.get('Nats-Msg-Id') ?? '';
  const ms = Number(m.headers?.get('Flotilla-Time'));
  const file =
    SAFE_ID.test(id) && Number.isSafeInteger(ms)
      ? spoolName(ms, id)
      : spoolName(Math.floor(m.info.timestampNanos / 1e6), `seq${m.seq}`);
  await writeMessageFile(maildir(layout, owner), file, Buffer.from(m.data), { fixed: true });
  // Acked only once the spool holds it; a lost ack means a redelivery, which the fixed name absorbs.
  m.ack();
}

/** Waits (COLLECT_MS at most) until each owner's consumer has handed over everything and every ack is in. */
async function handedOver(open: Opener, names: BusNames, owners: readonly string[]): Promise<void> {
  const { jsm } = await withTimeout(open(), COLLECT_MS);
  const end = Date.now() + COLLECT_MS;
  for (const owner of owners) {
    for (;;) {
      const info = await withTimeout(jsm.consumers.info(names.mailStream, names.mailConsumer(owner)), COLLECT_MS).catch(
        () => null,
      );
      if (!info || (info.num_pending === 0 && info.num_ack_pending === 0) || Date.now() > end) break;
      await sleep(20);
    }
  }
}

/** How many messages wait on the bus for each of `owners` (those with none left out); null when the bus did not say. */
async function waitingOn(
  reads: () => Promise<Reads>,
  names: BusNames,
  owners: readonly string[],
): Promise<Map<string, number> | null> {
  const out = new Map<string, number>();
  if (!owners.length) return out;
  try {
    const r = await withTimeout(reads(), COLLECT_MS);
    // One request for every recipient's count: the stream keeps a message until a spool acknowledged it (work-queue
    // retention). A stream not made yet holds none.
    const state = await withTimeout(r.streamState(names.mailStream, names.mailSubject('>')), COLLECT_MS);
    const counts = state?.subjects ?? {};
    for (const owner of owners) {
      const n = counts[names.mailSubject(owner)] ?? 0;
      if (n > 0) out.set(owner, n);
    }
  } catch {
    // Unreachable or slow: unknown (a count shows the spools' own; a look goes on to the consumer).
    return null;
  }
  return out;
}
