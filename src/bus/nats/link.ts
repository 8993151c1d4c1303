import type { NatsConnection } from '@nats-io/transport-node';
import type { JetStreamClient, JetStreamManager } from '@nats-io/jetstream';
import type { Config } from '../../config/schema.js';
import { FlotillaError, errorMessage } from '../../errors.js';
import { clientReads, wireReads, type Reads } from './reads.js';
import { WireUnsupported, wireConnect, type Wire } from './wire.js';

/** One connection to the fleet's NATS server with its JetStream handles. */
export interface Link {
  nc: NatsConnection;
  js: JetStreamClient;
  jsm: JetStreamManager;
  /** A look's reads over this connection. */
  reader: Reads;
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
  /**
   * A look's reads (reads.ts): over the client's connection when this process holds one, else over a bare reader
   * (wire.ts), which does not load the NATS client: a `status` that writes nothing never loads it.
   */
  reads(): Promise<Reads>;
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
  /** The bare reader, while no client connection is held; null inside: this server is read through the client. */
  wire: Promise<{ wire: Wire; reads: Reads } | null> | null;
  /** The bare reader once connected. */
  bare: Wire | null;
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
    if (!s)
      connections.set(
        key,
        (s = { link: null, wire: null, bare: null, connected: false, users: new Set(), reconnected: new Set() }),
      );
    return s;
  };
  const self = {};
  const mine: (() => void)[] = [];
  const connect = (s: Shared): Promise<Link> => {
    const link = (async () => {
      // The client loads here, on a process's first write (or read the bare reader cannot make).
      const [{ connectNats }, { jetstream, jetstreamManager }] = await Promise.all([
        import('./connect.js'),
        import('./client.js'),
      ]);
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
      const jsm = await jetstreamManager(nc, { checkAPI: false });
      const js = jetstream(nc, { checkAPI: false });
      return { nc, js, jsm, reader: clientReads(js, jsm, () => nc.info?.version) };
    })();
    link.catch(() => {
      if (s.link === link) s.link = null;
    });
    return link;
  };
  const open = (): Promise<Link> => {
    const s = shared();
    s.users.add(self);
    for (const fn of mine) s.reconnected.add(fn);
    s.link ??= connect(s);
    return s.link;
  };
  return {
    open,
    async reads() {
      const s = shared();
      s.users.add(self);
      if (!s.link) {
        // One that lost its server connects again (the client would reconnect by itself).
        if (s.bare && !s.bare.up()) s.wire = s.bare = null;
        s.wire ??= bareReader(url, settings, s);
        const bare = await s.wire;
        if (bare) return bare.reads;
      }
      return (await open()).reader;
    },
    onReconnect(fn) {
      mine.push(fn);
      shared().reconnected.add(fn);
    },
    opened: () => shared().users.has(self) && shared().link !== null,
    up: () => shared().users.has(self) && ((shared().link !== null && shared().connected) || wireUp(shared())),
    async close() {
      const s = shared();
      for (const fn of mine) s.reconnected.delete(fn);
      if (!s.users.delete(self) || s.users.size > 0) return;
      const current = s.link;
      const wire = s.wire;
      s.link = null;
      s.wire = null;
      s.bare = null;
      s.connected = false;
      void wire?.then(
        (w) => w?.wire.close(),
        () => undefined,
      );
      if (current)
        await current.then(
          (l) => l.nc.close(),
          () => undefined,
        );
    },
  };
}

/**
 * A bare reader of the server (wire.ts), or null when this server is read through the client: it asks for TLS (or the
 * URL says tls://), or it refused the reader's hello (credentials: the client's own error says it). A server that does
 * not answer is unreachable, as the client would find it. Forgotten when it fails, so the next read connects afresh.
 */
function bareReader(
  url: string,
  settings: Config['fleet']['nats'],
  s: Shared,
): Promise<{ wire: Wire; reads: Reads } | null> {
  const p = (async () => {
    if (url.startsWith('tls://')) return null;
    const env = process.env;
    const auth = {
      token: env[settings.token_env],
      user: env[settings.user_env],
      pass: env[settings.password_env],
    };
    try {
      const wire = await wireConnect(url.replace(/^nats:\/\//, ''), auth, `flotilla-${process.pid}`, 2_000);
      s.bare = wire;
      return { wire, reads: wireReads(wire) };
    } catch (err) {
      if (err instanceof WireUnsupported || /^nats: /.test(errorMessage(err))) return null;
      throw new FlotillaError(
        `cannot reach the bus ${url}: ${errorMessage(err)} — start it (nats-server -js) or check fleet.bus`,
        { code: 'bus-unreachable', cause: err },
      );
    }
  })();
  p.catch(() => {
    if (s.wire === p) s.wire = null;
  });
  return p;
}

/** Whether the bare reader is connected (a look's close ships its audit lines only to a bus it reached). */
function wireUp(s: Shared): boolean {
  return s.bare?.up() ?? false;
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
