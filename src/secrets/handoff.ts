import { chmodSync, mkdirSync, rmSync } from 'node:fs';
import { connect, createServer, type Socket } from 'node:net';
import { dirname } from 'node:path';
import { errorMessage, FlotillaError, isErrno } from '../errors.js';
import { MAX_SECRET_BYTES } from './keys.js';

/**
 * The handoff of one secret request's answer (§11): a Unix socket the waiting harness creates
 * for that request only (in a 0700 folder, the socket itself 0600) and removes as soon as an
 * answer is taken. The approving person's process connects and writes one JSON header line
 * (`{"decision":"approve","ttl_secs":60}`), then, for an approval, the value's bytes, then
 * half-closes; the harness replies with one JSON line. The value never lands in a file, an
 * argv or an environment on its way.
 */

export interface HandoffHeader {
  decision: 'approve' | 'deny';
  ttl_secs?: number;
  reason?: string;
  /** Who answered, for the audit line: `cli`, `dashboard`. */
  by?: string;
}

export interface HandoffReply {
  ok: boolean;
  /** One line for the person: what happened, or why not. */
  message: string;
  /** ISO expiry of a grant. */
  expires_at?: string;
}

/** What the harness does with an answer; `settled: false` keeps the socket open for another try. */
export type HandoffHandler = (header: HandoffHeader, value: Buffer) => Promise<HandoffReply & { settled: boolean }>;

const HEADER_MAX = 4096;

export interface HandoffListener {
  /** Stops listening and removes the socket (idempotent). */
  close(): void;
}

/** Listens on `path` for answers until the handler settles one, or `close()`. */
export async function listenForAnswer(path: string, handle: HandoffHandler): Promise<HandoffListener> {
  const dir = dirname(path);
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  chmodSync(dir, 0o700);
  rmSync(path, { force: true });
  const server = createServer({ allowHalfOpen: true });
  let closed = false;
  const close = () => {
    if (closed) return;
    closed = true;
    server.close();
    rmSync(path, { force: true });
  };
  server.on('connection', (sock) => {
    void readAnswer(sock).then(async (got) => {
      if (closed) return reply(sock, { ok: false, message: 'this request is no longer waiting for an answer' });
      if ('error' in got) return reply(sock, { ok: false, message: got.error });
      try {
        const { settled, ...answer } = await handle(got.header, got.value);
        if (settled) close();
        reply(sock, answer);
      } catch (err) {
        reply(sock, { ok: false, message: errorMessage(err) });
      } finally {
        got.value.fill(0);
      }
    });
  });
  server.on('error', () => close());
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(path, () => {
      server.off('error', reject);
      resolve();
    });
  });
  chmodSync(path, 0o600);
  return { close };
}

function reply(sock: Socket, r: HandoffReply): void {
  sock.end(JSON.stringify(r) + '\n');
}

/** Reads one answer into a buffer of its own (zeroed by the caller); chunk buffers are zeroed as they are copied. */
function readAnswer(sock: Socket): Promise<{ header: HandoffHeader; value: Buffer } | { error: string }> {
  return new Promise((resolve) => {
    const limit = HEADER_MAX + MAX_SECRET_BYTES;
    const all = Buffer.alloc(limit);
    let size = 0;
    let over = false;
    sock.on('data', (chunk: Buffer) => {
      if (size + chunk.length > limit) over = true;
      else {
        chunk.copy(all, size);
        size += chunk.length;
      }
      chunk.fill(0);
    });
    sock.on('error', () => undefined);
    sock.on('end', () => {
      const fail = (error: string) => {
        all.fill(0);
        resolve({ error });
      };
      if (over) return fail(`the value is over ${MAX_SECRET_BYTES} bytes`);
      const nl = all.subarray(0, Math.min(size, HEADER_MAX)).indexOf(0x0a);
      if (nl < 0) return fail('malformed answer: no header line');
      let header: HandoffHeader;
      try {
        header = JSON.parse(all.subarray(0, nl).toString('utf8')) as HandoffHeader;
      } catch {
        return fail('malformed answer: the header is not JSON');
      }
      if (header.decision !== 'approve' && header.decision !== 'deny')
        return fail("malformed answer: decision must be 'approve' or 'deny'");
      const value = Buffer.alloc(size - nl - 1);
      all.copy(value, 0, nl + 1, size);
      all.fill(0);
      resolve({ header, value });
    });
  });
}

/** Sends an answer to the harness waiting on `path`; resolves with its reply. */
export function sendAnswer(
  path: string,
  header: HandoffHeader,
  value?: Buffer,
  timeoutMs = 15_000,
): Promise<HandoffReply> {
  return new Promise((resolve, reject) => {
    const sock = connect({ path, allowHalfOpen: true });
    const chunks: Buffer[] = [];
    const timer = setTimeout(() => {
      sock.destroy();
      reject(
        new FlotillaError('the agent did not answer the handoff within 15 s — check it with flotilla status', {
          code: 'handoff-timeout',
        }),
      );
    }, timeoutMs);
    sock.on('connect', () => {
      sock.write(JSON.stringify(header) + '\n');
      if (value) sock.write(value);
      sock.end();
    });
    sock.on('data', (c: Buffer) => chunks.push(c));
    sock.on('error', (err) => {
      clearTimeout(timer);
      if (isErrno(err, 'ENOENT') || isErrno(err, 'ECONNREFUSED')) {
        reject(
          new FlotillaError('the agent is no longer waiting for this request (its handoff socket is gone)', {
            code: 'not-waiting',
          }),
        );
      } else
        reject(
          new FlotillaError(`cannot reach the agent's handoff socket ${path}: ${errorMessage(err)}`, {
            code: 'handoff',
          }),
        );
    });
    sock.on('end', () => {
      clearTimeout(timer);
      try {
        resolve(JSON.parse(Buffer.concat(chunks).toString('utf8')) as HandoffReply);
      } catch {
        reject(new FlotillaError('the agent sent no reply to the handoff', { code: 'handoff' }));
      }
    });
  });
}
