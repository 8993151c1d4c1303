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
 * A user's handle on the one connection a process keeps to the bus (§18): mail, records, the
 * audit, the caps and the shared stores (boards, leases) each hold one, and every handle for
 * the same server and credentials shares the connection — opened on first use, forgotten when
 * connecting failed (so the next use connects afresh), closed when the last handle that used
 * it lets go, and told to whoever waits for the server to come back after an outage.
 */
export interface NatsLink {
  open(): Promise<Link>;
  /** Called each time the client reconnects after the server went away. */
  onReconnect(fn: () => void): void;
  /** Whether this handle ever asked for the connection, and it is open (close has something to flush). */
  opened(): boolean;
  /** Connected now: opened, and not cut off from the server since (its client reconnects by itself). */
  up(): boolean;
  /** Lets go of the connection: closed when no other handle holds it. */
  close(): Promise<void>;
}

/** A connection shared by the handles of one server and its credentials. */
interface Shared {
  link: Promise<Link> | null;
  connected: boolean;
  /** The handles that asked for the connection and have not let go. */
  users: Set<object>;
  reconnected: Set<() => void>;
}

const connections = new Map<string, Shared>();

export function natsLink(url: string, settings: Config['fleet']['nats']): NatsLink {
  const key = JSON.stringify([url, settings]);
  const shared = (): Shared => {
    let s = connections.get(key);
    if (!s) connections.set(key, (s = { link: null, connected: false, users: new Set(), reconnected: new Set() }));
    return s;
  };
  const self = {};
  const mine: (() => void)[] = [];
  const connect = (s: Shared): Promise<Link> => {
    const link = (async () => {
      const nc = await connectNats(url, settings);
      s.connected = true;
      void (async () => {
        for await (const st of nc.status()) {
          if (st.type === 'disconnect') s.connected = false;
          if (st.type === 'reconnect') {
            s.connected = true;
            for (const fn of s.reconnected) fn();
          }
        }
      })().catch(() => undefined);
      // No account check per handle: every request fails on its own when JetStream is off, and a look pays one round
      // trip less.
      return { nc, js: jetstream(nc, { checkAPI: false }), jsm: await jetstreamManager(nc, { checkAPI: false }) };
    })();
    link.catch(() => {
      if (s.link === link) s.link = null;
    });
    return link;
  };
  return {
    open() {
      const s = shared();
      s.users.add(self);
      for (const fn of mine) s.reconnected.add(fn);
      s.link ??= connect(s);
      return s.link;
    },
    onReconnect(fn) {
      mine.push(fn);
      shared().reconnected.add(fn);
    },
    opened: () => shared().users.has(self) && shared().link !== null,
    up: () => shared().users.has(self) && shared().link !== null && shared().connected,
    async close() {
      const s = shared();
      for (const fn of mine) s.reconnected.delete(fn);
      if (!s.users.delete(self) || s.users.size > 0) return;
      const current = s.link;
      s.link = null;
      s.connected = false;
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
