import {
  AckPolicy,
  DeliverPolicy,
  JetStreamApiCodes,
  JetStreamApiError,
  type JetStreamClient,
  type JetStreamManager,
} from '@nats-io/jetstream';
import { nanos } from '@nats-io/transport-node';

/** A key's last value in a KV bucket, with the server's time of its put. */
export interface LastValue {
  key: string;
  value: Uint8Array;
  created: Date;
}

/**
 * What a fetch waits when nothing more comes (the consumer's count included a message the stream dropped for a newer
 * put).
 */
const FETCH_EXPIRES_MS = 2_000;
const BATCH = 256;
/** Up to this many keys, each is got on its own (all at once); past it, one consumer reads them all. */
export const FEW_KEYS = 16;

/**
 * Each live key's last value in a KV bucket (`keys`: a subject pattern under the bucket). The
 * stream's subject counts come first (one request, names only): no keys, or no bucket yet, is
 * an empty read, and a few keys are each got by subject, all at once — two round trips, which
 * is what a look at the hosts' heartbeats, a board or the live records costs. Past FEW_KEYS, an
 * ephemeral pull consumer of the bucket's stream delivers the last message per subject (then
 * any put since), fetched in batches until it has caught up, then deleted.
 *
 * Not the KV library's `history()`: it ends only on a message that says nothing is pending,
 * and while puts land as it reads (every agent's heartbeat puts its record every 2 s) that
 * message may never come — it then streams every new put until the caller's timeout, and a
 * `status` or a model's list_agents saw the bus as unreachable (measured: 13 of 100 reads of a
 * 20-key bucket under a put every 20 ms). A pull consumer's fetch is read as fast as this
 * process can, so it catches up with the puts; a fetch also ends on its expiry.
 */
export async function lastValues(
  link: { js: JetStreamClient; jsm: JetStreamManager },
  bucket: string,
  keys = '>',
): Promise<LastValue[]> {
  const stream = `KV_${bucket}`;
  const prefix = `$KV.${bucket}.`;
  let held: string[];
  let lastSeq: number;
  try {
    const info = await link.jsm.streams.info(stream, { subjects_filter: `${prefix}${keys}` });
    held = subjectsOf(info);
    lastSeq = info.state.last_seq;
  } catch (err) {
    // A bucket nobody has written yet holds no keys: a reader never makes it.
    if (err instanceof JetStreamApiError && err.code === JetStreamApiCodes.StreamNotFound) return [];
    throw err;
  }
  if (held.length === 0) return [];
  const latest = new Map<string, LastValue | null>();
  if (held.length > FEW_KEYS) await consumerRead(link, stream, prefix, keys, lastSeq, latest);
  // Each key not read yet — all of them when few; when many, those the server passed over (a key
  // put again while the consumer was being made, seen on nats-server 2.9) — asked for alone.
  const missed = held.map((subject) => subject.slice(prefix.length)).filter((key) => !latest.has(key));
  await Promise.all(
    missed.map(async (key) => {
      const m = await lastOf(link.jsm, stream, `${prefix}${key}`).catch(() => null);
      if (m && !m.header?.get('KV-Operation')) latest.set(key, { key, value: m.data, created: m.time });
    }),
  );
  return [...latest.values()].filter((v): v is LastValue => v !== null);
}

/**
 * A subject's last message by a direct get: the value comes as the reply's payload, where the stream's message get
 * wraps it in JSON as base64 (a window of 100 records is ~100 KB, decoded byte by byte in JavaScript). A KV bucket's
 * stream allows direct gets; one that does not (no responder) is read the other way.
 */
async function lastOf(
  jsm: JetStreamManager,
  stream: string,
  subject: string,
): Promise<{ data: Uint8Array; time: Date; header?: { get(k: string): string } } | null> {
  try {
    return await jsm.direct.getMessage(stream, { last_by_subj: subject });
  } catch (err) {
    if (!(err instanceof Error) || !/no responders|503/i.test(err.message)) throw err;
    return jsm.streams.getMessage(stream, { last_by_subj: subject });
  }
}

function subjectsOf(info: { state: { subjects?: Record<string, number> } }): string[] {
  return Object.keys(info.state.subjects ?? {});
}

/**
 * Every key's last value under `keys` through one ephemeral consumer, into `latest` (null: the key was deleted), up to
 * the stream's message `lastSeq` (its last when the read began): the consumer's pending count never reaches 0 while
 * other keys are put and removed as fast as it reads (it grew from 17 to 85 over 5,000 messages on nats-server
 * 2.9.10), and a read that waited for it never ended. A key put again past `lastSeq` lost the message the read would
 * have given; lastValues asks for it alone.
 */
async function consumerRead(
  link: { js: JetStreamClient; jsm: JetStreamManager },
  stream: string,
  prefix: string,
  keys: string,
  lastSeq: number,
  latest: Map<string, LastValue | null>,
): Promise<void> {
  const info = await link.jsm.consumers.add(stream, {
    ack_policy: AckPolicy.None,
    deliver_policy: DeliverPolicy.LastPerSubject,
    filter_subject: `${prefix}${keys}`,
    inactive_threshold: nanos(60_000),
    mem_storage: true,
  });
  try {
    if (info.num_pending === 0) return;
    const consumer = await link.js.consumers.get(stream, info.name);
    // Until caught up: a key put again meanwhile loses its older message to the newer one,
    // which comes after the keys counted at the start, so reading stops at the stream's end or at lastSeq.
    for (let caughtUp = false; !caughtUp;) {
      let got = 0;
      for await (const m of await consumer.fetch({ max_messages: BATCH, expires: FETCH_EXPIRES_MS })) {
        got++;
        const key = m.subject.slice(prefix.length);
        // A delete or purge marker: the key has no value.
        const op = m.headers?.get('KV-Operation');
        latest.set(key, op ? null : { key, value: m.data, created: new Date(Math.floor(m.info.timestampNanos / 1e6)) });
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
