import type { JetStreamClient, JetStreamManager } from '@nats-io/jetstream';
import { clientReads, type Reads } from './reads.js';

/** Where a read goes: a process's NatsLink (reads.ts), or a connection of the NATS client already open. */
export type ReadSource = { reads(): Promise<Reads> } | { js: JetStreamClient; jsm: JetStreamManager; reader?: Reads };

/** The reads of a source. */
export async function readsOf(source: ReadSource): Promise<Reads> {
  if ('reads' in source) return source.reads();
  return source.reader ?? clientReads(source.js, source.jsm, () => undefined);
}

/** A key's last value in a KV bucket, with the server's time of its put. */
export interface LastValue {
  key: string;
  value: Uint8Array;
  created: Date;
}

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
export async function lastValues(from: ReadSource, bucket: string, keys = '>'): Promise<LastValue[]> {
  const stream = `KV_${bucket}`;
  const prefix = `$KV.${bucket}.`;
  const reads = await readsOf(from);
  const state = await reads.streamState(stream, `${prefix}${keys}`);
  // A bucket nobody has written yet holds no keys: a reader never makes it.
  const held = Object.keys(state?.subjects ?? {});
  if (!state || held.length === 0) return [];
  const latest = new Map<string, LastValue | null>();
  if (held.length > FEW_KEYS)
    await reads.lastPerSubject(stream, `${prefix}${keys}`, state.last_seq, (subject, m) => {
      const key = subject.slice(prefix.length);
      // A delete or purge marker: the key has no value.
      latest.set(key, m.operation ? null : { key, value: m.data, created: m.time });
    });
  // Each key not read yet — all of them when few; when many, those the server passed over (a key
  // put again while the consumer was being made, seen on nats-server 2.9) — asked for alone.
  const missed = held.map((subject) => subject.slice(prefix.length)).filter((key) => !latest.has(key));
  await Promise.all(
    missed.map(async (key) => {
      const m = await reads.last(stream, `${prefix}${key}`).catch(() => null);
      if (m && !m.operation) latest.set(key, { key, value: m.data, created: m.time });
    }),
  );
  return [...latest.values()].filter((v): v is LastValue => v !== null);
}
