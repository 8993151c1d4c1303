import { connect as netConnect } from 'node:net';
import { randomBytes } from 'node:crypto';

/** A message the server sent to one of this connection's inboxes: its headers' block (HMSG) and payload. */
export interface WireMsg {
  /** The subject it was published on (a consumer's message: its own, not the inbox). */
  subject: string;
  /** Its reply subject: a JetStream message's `$JS.ACK.…` for a consumer's. */
  reply: string;
  /** The status line and headers as sent (`NATS/1.0 404 …\r\nName: value…`), or null for a plain MSG. */
  headers: string | null;
  data: Buffer;
}

/**
 * A read-only connection to a NATS server over its text protocol (§14, §18): INFO, CONNECT,
 * PING/PONG, one SUB on an inbox, PUB with a reply subject, MSG and HMSG back. Enough for what a
 * look at the fleet (`status`) asks JetStream — stream infos, direct gets, a pull consumer's
 * batches — without loading the NATS client (~10 ms of CPU, and ~1 ms of it per request): a
 * command that writes uses the client (link.ts). No TLS and no reconnects: a `tls://` bus, or
 * a server that asks for TLS, is read through the client; a read that fails fails, and a
 * connection lost or left unanswered is closed, so the next read connects afresh (link.ts).
 */
export interface Wire {
  /** The server's version, from its INFO. */
  version: string;
  /** Whether the socket is still open. */
  up(): boolean;
  /** Publishes `payload` on `subject` and resolves with its reply, or rejects after `ms`. */
  request(subject: string, payload: string, ms: number): Promise<WireMsg>;
  /**
   * The same with an inbox of its own, whose every message (a pull consumer's batch: each under its own subject)
   * goes to `each` until it returns true (done) or `ms` pass.
   */
  requestMany(subject: string, payload: string, ms: number, each: (m: WireMsg) => boolean): Promise<void>;
  close(): void;
}

export interface WireAuth {
  token?: string;
  user?: string;
  pass?: string;
}

/** Thrown when the server wants what this reader does not do (TLS): the caller reads through the client instead. */
export class WireUnsupported extends Error {}

interface Waiter {
  each: (m: WireMsg) => boolean;
  resolve: (m: WireMsg) => void;
  /** Its own subscription's id, to end it (requestMany); 0 for the shared inbox's. */
  sid: number;
  reject: (e: Error) => void;
  timer: NodeJS.Timeout;
}

/** Connects to `host:port` and says hello; rejects on an error, a refusal, or no answer within `ms`. */
export function wireConnect(server: string, auth: WireAuth, name: string, ms: number): Promise<Wire> {
  const at = server.lastIndexOf(':');
  const host = at === -1 ? server : server.slice(0, at);
  const port = at === -1 ? 4222 : Number(server.slice(at + 1));
  const socket = netConnect(port, host.replace(/^\[|\]$/g, ''));
  socket.setNoDelay(true);
  const inbox = `_INBOX.${randomBytes(12).toString('hex')}.`;
  const waiters = new Map<string, Waiter>();
  let next = 0;
  let open = true;
  let hello: { resolve(): void; reject(e: Error): void } | null = null;
  const fail = (err: Error) => {
    open = false;
    socket.destroy();
    hello?.reject(err);
    for (const w of waiters.values()) {
      clearTimeout(w.timer);
      w.reject(err);
    }
    waiters.clear();
  };
  const parser = lineParser({
    info(info) {
      if (info.tls_required) return fail(new WireUnsupported('the server asks for TLS'));
      socket.write(`${helloLine(auth, name)}PING\r\nSUB ${inbox}* 1\r\n`);
      version = typeof info.version === 'string' ? info.version : '?';
    },
    ping: () => socket.write('PONG\r\n'),
    pong() {
      hello?.resolve();
      hello = null;
    },
    error: (text) => fail(new Error(`nats: ${text}`)),
    msg(sid, m) {
      // The shared inbox's replies by their subject; a request's own inbox (sid) whatever the subject.
      const key = sid === '1' ? m.subject : `#${sid}`;
      const w = waiters.get(key);
      if (!w || !w.each(m)) return;
      done(key, w);
      w.resolve(m);
    },
  });
  let version = '?';
  socket.on('data', (chunk: Buffer) => {
    try {
      parser(chunk);
    } catch (err) {
      fail(err instanceof Error ? err : new Error(String(err)));
    }
  });
  socket.on('error', (err) => fail(err));
  socket.on('close', () => fail(new Error('connection closed')));
  const done = (key: string, w: Waiter) => {
    waiters.delete(key);
    clearTimeout(w.timer);
    if (w.sid && open) socket.write(`UNSUB ${w.sid}\r\n`);
  };
  const ask = (subject: string, payload: string, ms: number, each: (m: WireMsg) => boolean, own: boolean) => {
    if (!open) return Promise.reject(new Error('connection closed'));
    const n = ++next + 1;
    const reply = `${inbox}${n}`;
    const key = own ? `#${n}` : reply;
    return new Promise<WireMsg>((resolve, reject) => {
      const w: Waiter = {
        each,
        resolve,
        reject,
        sid: own ? n : 0,
        // A connection that stopped answering (no PINGs of ours to tell) is closed: the next read connects afresh.
        timer: setTimeout(() => fail(new Error(`no answer from the bus within ${ms} ms`)), ms),
      };
      waiters.set(key, w);
      const sub = own ? `SUB ${reply} ${n}\r\n` : '';
      socket.write(`${sub}PUB ${subject} ${reply} ${Buffer.byteLength(payload)}\r\n${payload}\r\n`);
    });
  };
  const wire: Wire = {
    get version() {
      return version;
    },
    up: () => open,
    request: (subject, payload, ms) => ask(subject, payload, ms, () => true, false),
    requestMany: async (subject, payload, ms, each) => {
      await ask(subject, payload, ms, each, true);
    },
    close() {
      open = false;
      socket.end();
      socket.unref();
    },
  };
  return new Promise<Wire>((resolve, reject) => {
    const timer = setTimeout(() => fail(new Error(`no answer within ${ms} ms`)), ms);
    hello = settleOnce(timer, () => resolve(wire), reject);
  });
}

/** The hello's callbacks: either ends the wait for it. */
function settleOnce(timer: NodeJS.Timeout, resolve: () => void, reject: (e: Error) => void) {
  return {
    resolve: () => {
      clearTimeout(timer);
      resolve();
    },
    reject: (e: Error) => {
      clearTimeout(timer);
      reject(e);
    },
  };
}

/** The CONNECT line: headers (a direct get's reply has them), no-responders statuses, the credentials given. */
function helloLine(auth: WireAuth, name: string): string {
  const connect = {
    verbose: false,
    pedantic: false,
    headers: true,
    no_responders: true,
    protocol: 1,
    lang: 'flotilla',
    version: '1',
    name,
    ...(auth.token ? { auth_token: auth.token } : {}),
    ...(auth.user ? { user: auth.user, pass: auth.pass ?? '' } : {}),
  };
  return `CONNECT ${JSON.stringify(connect)}\r\n`;
}

interface Handlers {
  info(info: { tls_required?: boolean; version?: unknown }): void;
  ping(): void;
  pong(): void;
  error(text: string): void;
  msg(sid: string, m: WireMsg): void;
}

/** The protocol's parser: control lines up to CRLF, and a MSG's or HMSG's payload by its byte count. */
function lineParser(on: Handlers): (chunk: Buffer) => void {
  let buf: Buffer = Buffer.alloc(0);
  return (chunk) => {
    buf = buf.length ? Buffer.concat([buf, chunk]) : chunk;
    let at = 0;
    for (;;) {
      const end = buf.indexOf('\r\n', at);
      if (end === -1) break;
      const line = buf.toString('latin1', at, end);
      const body = end + 2;
      if (line.startsWith('MSG ') || line.startsWith('HMSG ')) {
        // MSG <subject> <sid> [reply] <bytes>; HMSG <subject> <sid> [reply] <header bytes> <total bytes>
        const parts = line.split(' ');
        const h = parts[0] === 'HMSG';
        const total = Number(parts[parts.length - 1]);
        const hdr = h ? Number(parts[parts.length - 2]) : 0;
        if (buf.length < body + total + 2) break;
        const reply = parts.length === (h ? 6 : 5) ? parts[3]! : '';
        on.msg(parts[2]!, {
          subject: parts[1]!,
          reply,
          headers: h ? buf.toString('latin1', body, body + hdr) : null,
          data: buf.subarray(body + hdr, body + total),
        });
        at = body + total + 2;
        continue;
      }
      at = body;
      if (line.startsWith('INFO ')) on.info(JSON.parse(line.slice(5)) as { tls_required?: boolean });
      else if (line === 'PING') on.ping();
      else if (line === 'PONG') on.pong();
      else if (line.startsWith('-ERR')) on.error(line.slice(5).replace(/^'|'$/g, ''));
    }
    buf = at === buf.length ? Buffer.alloc(0) : buf.subarray(at);
  };
}
