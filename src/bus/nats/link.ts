import type { NatsConnection } from '@nats-io/transport-node';
import { jetstream, jetstreamManager, type JetStreamClient, type JetStreamManager } from '@nats-io/jetstream';
import type { Config } from '../../config/schema.js';
import { connectNats } from './connect.js';

/** One connection to the fleet's NATS server with its JetStream handles. */
export interface Link {
  nc: NatsConnection;
  js: JetStreamClient;
  jsm: JetStreamManager;
}

/**
 * The one connection a process keeps to the bus (§18), shared by mail and records: opened on
 * first use, forgotten when connecting failed (so the next use connects afresh), and told to
 * whoever waits for the server to come back after an outage.
 */
export interface NatsLink {
  open(): Promise<Link>;
  /** Called each time the client reconnects after the server went away. */
  onReconnect(fn: () => void): void;
  /** Whether a connection was ever asked for (close has something to flush). */
  opened(): boolean;
  /** Connected now: opened, and not cut off from the server since (its client reconnects by itself). */
  up(): boolean;
  close(): Promise<void>;
}

export function natsLink(url: string, settings: Config['fleet']['nats']): NatsLink {
  let link: Promise<Link> | null = null;
  let used = false;
  let connected = false;
  const reconnected: (() => void)[] = [];
  return {
    open() {
      used = true;
      link ??= (async () => {
        const nc = await connectNats(url, settings);
        connected = true;
        void (async () => {
          for await (const s of nc.status()) {
            if (s.type === 'disconnect') connected = false;
            if (s.type === 'reconnect') {
              connected = true;
              for (const fn of reconnected) fn();
            }
          }
        })().catch(() => undefined);
        return { nc, js: jetstream(nc), jsm: await jetstreamManager(nc) };
      })();
      link.catch(() => {
        link = null;
      });
      return link;
    },
    onReconnect(fn) {
      reconnected.push(fn);
    },
    opened: () => used && link !== null,
    up: () => link !== null && connected,
    async close() {
      const current = link;
      link = null;
      connected = false;
      if (current)
        await current.then(
          (l) => l.nc.close(),
          () => undefined,
        );
    },
  };
}

/**
 * What `make` builds on the process's connection (a stream made sure of, a bucket opened), built
 * once per connection: a failure is forgotten, so the next call tries again, and a new connection
 * after the last was closed builds it afresh.
 */
export function perLink<T>(connection: NatsLink, make: (link: Link) => Promise<T>): () => Promise<T> {
  const made = new WeakMap<Link, Promise<T>>();
  return async () => {
    const link = await connection.open();
    let ready = made.get(link);
    if (!ready) {
      ready = make(link);
      made.set(link, ready);
      ready.catch(() => made.delete(link));
    }
    return ready;
  };
}
