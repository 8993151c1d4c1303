import type { JetStreamClient, JetStreamManager, StreamInfo } from '@nats-io/jetstream';
import type { KV, KvEntry } from '@nats-io/kv';
import { isStreamNotFound } from './reads.js';

/** What a reader of a bucket by key uses: its `get`. */
export type BoundBucket = Pick<KV, 'get'>;

/**
 * A KV bucket bound for reads by key, never made by them (§18). The KV library's bound bucket, told nothing of the
 * stream, reads by the stream's message get, which panicked nats-server 2.9.10 while another process was making the
 * bucket (store-window.ts). So the stream's plain info comes first, which such a stream answers safely: no stream, or
 * none holding messages (as one being made holds none), reads as nothing; one that holds messages has its store for
 * good, and is read from then on by direct get where it allows them (one request, the value as it is), else by its
 * message get. A direct get is not tried blind: on 2.9.10 one that nobody serves times out rather than failing.
 */
export function boundBucket(js: JetStreamClient, jsm: JetStreamManager, name: string): BoundBucket {
  let reader: Promise<KV> | undefined;
  const readerOf = async (info: StreamInfo): Promise<KV> => {
    const { Kvm } = await import('./client.js');
    return new Kvm(js).open(name, { allow_direct: info.config.allow_direct === true });
  };
  return {
    async get(key, opts): Promise<KvEntry | null> {
      if (!reader) {
        let info: StreamInfo;
        try {
          info = await jsm.streams.info(`KV_${name}`);
        } catch (err) {
          if (isStreamNotFound(err)) return null;
          throw err;
        }
        if (info.state.messages === 0) return null;
        reader ??= readerOf(info);
      }
      return (await reader).get(key, opts);
    },
  };
}
