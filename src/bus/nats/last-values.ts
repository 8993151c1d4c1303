import { AckPolicy, DeliverPolicy, type JetStreamClient, type JetStreamManager } from '@nats-io/jetstream';
import { nanos } from '@nats-io/transport-node';

/** A key's last value in a KV bucket, with the server's time of its put. */
export interface LastValue {
  key: string;
  value: Uint8Array;
  created: Date;
}

/** What a fetch waits when nothing more comes (the consumer's count included a message the stream dropped for a newer put). */
const FETCH_EXPIRES_MS = 2_000;
const BATCH = 256;

/**
 * Each live key's last value in a KV bucket (`keys`: a subject pattern under the bucket), read
 * with an ephemeral pull consumer of the bucket's stream that delivers the last message per
 * subject (then any put since), fetched in batches until it has caught up, then deleted.
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
  const info = await link.jsm.consumers.add(stream, {
    ack_policy: AckPolicy.None,
    deliver_policy: DeliverPolicy.LastPerSubject,
    filter_subject: `${prefix}${keys}`,
    inactive_threshold: nanos(60_000),
    mem_storage: true,
  });
  try {
    const latest = new Map<string, LastValue | null>();
    if (info.num_pending > 0) {
      const consumer = await link.js.consumers.get(stream, info.name);
      // Until caught up: a key put again meanwhile loses its older message to the newer one,
      // which comes after the keys counted at the start, so reading stops at the stream's end.
      try {
        for (let caughtUp = false; !caughtUp;) {
          let got = 0;
          for await (const m of await consumer.fetch({ max_messages: BATCH, expires: FETCH_EXPIRES_MS })) {
            got++;
            const key = m.subject.slice(prefix.length);
            // A delete or purge marker: the key has no value.
            const op = m.headers?.get('KV-Operation');
            latest.set(
              key,
              op ? null : { key, value: m.data, created: new Date(Math.floor(m.info.timestampNanos / 1e6)) },
            );
            if (m.info.pending === 0) {
              caughtUp = true;
              break;
            }
          }
          if (got === 0) break;
        }
      } catch {
        // A fetch that failed midway — on a loaded machine the client's timers run late and it
        // calls the server's heartbeats missed — is not a failed read: every key it did not
        // give is asked for alone below, as a key the server passed over is.
      }
    }
    // The server can pass over a key put again while the consumer was being made (seen on
    // nats-server 2.9): every key the stream holds now, and the read did not give, is asked for alone.
    const all = await link.jsm.streams.info(stream, { subjects_filter: `${prefix}${keys}` });
    const missed = Object.keys(all.state.subjects ?? {})
      .map((subject) => subject.slice(prefix.length))
      .filter((key) => !latest.has(key));
    await Promise.all(
      missed.map(async (key) => {
        const m = await link.jsm.streams.getMessage(stream, { last_by_subj: `${prefix}${key}` }).catch(() => null);
        if (m && !m.header?.get('KV-Operation')) latest.set(key, { key, value: m.data, created: m.time });
      }),
    );
    return [...latest.values()].filter((v): v is LastValue => v !== null);
  } finally {
    await link.jsm.consumers.delete(stream, info.name).catch(() => undefined);
  }
}
