import type { JetStreamClient, JetStreamManager } from '@nats-io/jetstream';
import type { LastMessage } from './reads.js';
import { nanos } from './timeout.js';
import type { Wire } from './wire.js';

/**
 * What a fetch waits when nothing more comes (the consumer's count included a message the stream dropped for a newer
 * put).
 */
const FETCH_EXPIRES_MS = 2_000;
const BATCH = 256;
const API_TIMEOUT_MS = 5_000;

/** Hands each subject's last message to `each` (a delete or purge marker's with its `operation`). */
export type EachLast = (subject: string, m: LastMessage) => void;

/** The ephemeral consumer both readers make: the last message per subject under `filter`, nothing acknowledged. */
const consumerConfig = (filter: string) => ({
  ack_policy: 'none' as const,
  deliver_policy: 'last_per_subject' as const,
  filter_subject: filter,
  inactive_threshold: nanos(60_000),
  mem_storage: true,
});

/**
 * Every subject's last message under `filter` through one ephemeral consumer, up to the stream's message `lastSeq`
 * (its last when the read began): the consumer's pending count never reaches 0 while other keys are put and removed as
 * fast as it reads (it grew from 17 to 85 over 5,000 messages on nats-server 2.9.10), and a read that waited for it
 * never ended. A key put again past `lastSeq` lost the message the read would have given; the caller asks for it alone
 * (last-values.ts), as for any key a read that failed midway did not give.
 */
export async function clientLastPerSubject(
  link: { js: JetStreamClient; jsm: JetStreamManager },
  stream: string,
  filter: string,
  lastSeq: number,
  each: EachLast,
): Promise<void> {
  const info = await link.jsm.consumers.add(stream, consumerConfig(filter));
  try {
    if (info.num_pending === 0) return;
    const consumer = await link.js.consumers.get(stream, info.name);
    // Until caught up: a key put again meanwhile loses its older message to the newer one,
    // which comes after the keys counted at the start, so reading stops at the stream's end or at lastSeq.
    for (let caughtUp = false; !caughtUp;) {
      let got = 0;
      for await (const m of await consumer.fetch({ max_messages: BATCH, expires: FETCH_EXPIRES_MS })) {
        got++;
        const operation = m.headers?.get('KV-Operation');
        const time = new Date(Math.floor(m.info.timestampNanos / 1e6));
        each(m.subject, { data: m.data, time, ...(operation ? { operation } : {}) });
        if (m.info.pending === 0 || m.seq >= lastSeq) {
          caughtUp = true;
          break;
        }
      }
      if (got === 0) break;
    }
  } catch {
    // A fetch that failed midway — on a loaded machine the client's timers run late and it
    // calls the server's heartbeats missed — is not a failed read: every key it did not
    // give is asked for alone (lastValues), as a key the server passed over is.
  } finally {
    await link.jsm.consumers.delete(stream, info.name).catch(() => undefined);
  }
}

/**
 * The same over a bare reader (wire.ts): the consumer made by a request, each batch pulled by one whose inbox gets the
 * messages (each under its own subject, its stream sequence, time and pending count in its `$JS.ACK.…` reply subject),
 * ended by the batch's last or a status (404 no messages, 408 expired), then the consumer deleted.
 */
export async function wireLastPerSubject(
  wire: Wire,
  api: (subject: string, body: object | null) => Promise<Record<string, unknown>>,
  stream: string,
  filter: string,
  lastSeq: number,
  each: EachLast,
): Promise<void> {
  const info = (await api(`CONSUMER.CREATE.${stream}`, { stream_name: stream, config: consumerConfig(filter) })) as {
    name: string;
    num_pending: number;
  };
  try {
    if (info.num_pending === 0) return;
    const pull = { batch: BATCH, expires: nanos(FETCH_EXPIRES_MS) };
    for (let caughtUp = false; !caughtUp;) {
      let got = 0;
      await wire.requestMany(
        `$JS.API.CONSUMER.MSG.NEXT.${stream}.${info.name}`,
        JSON.stringify(pull),
        FETCH_EXPIRES_MS + API_TIMEOUT_MS,
        (m) => {
          // A status (no messages, expired, …) ends this pull.
          if (!m.reply.startsWith('$JS.ACK.')) return true;
          got++;
          const t = m.reply.split('.');
          // $JS.ACK.<stream>.<consumer>.<delivered>.<stream seq>.<consumer seq>.<time ns>.<pending>, or with the
          // domain and account hash after ACK (and a token more at the end).
          if (t.length === 9) t.splice(2, 0, '_', '');
          const seq = Number(t[7]);
          const operation = kvOperation(m.headers);
          each(m.subject, {
            data: m.data,
            time: new Date(Math.floor(Number(t[9]) / 1e6)),
            ...(operation ? { operation } : {}),
          });
          if (Number(t[10]) === 0 || seq >= lastSeq) caughtUp = true;
          return caughtUp || got === BATCH;
        },
      );
      if (got === 0) break;
    }
  } catch {
    // As the client's: every key not given is asked for alone.
  } finally {
    await api(`CONSUMER.DELETE.${stream}.${info.name}`, null).catch(() => undefined);
  }
}

/** A KV delete or purge marker's `KV-Operation` header, from a message's headers' block. */
export function kvOperation(headers: string | null): string | undefined {
  if (!headers) return undefined;
  const m = /\r\nKV-Operation:\s*([^\r]*)/i.exec(headers);
  return m ? m[1]!.trim() : undefined;
}
