import { chmodSync, mkdirSync, rmSync } from 'node:fs';
import { connect, createServer, type Server, type Socket } from 'node:net';
import { dirname } from 'node:path';
import { errorMessage, FlotillaError } from '../errors.js';

/**
 * The door of a sandboxed agent (§11): a Unix socket its harness listens on, the only way a
 * sandboxed command reaches the fleet. The fleet root is read-only inside the sandbox and
 * the process ancestry there is the sandbox's own, so `flotilla send` can neither write an
 * inbox nor prove who it is; it asks the harness instead, which delivers as itself. The
 * socket is bound into that agent's sandbox only (the doors folder is hidden there), so who
 * can connect is that agent: `from` needs no proof beyond reaching the door.
 *
 * Protocol: one JSON request line, then half-close; one JSON reply line.
 */

export interface DoorSend {
  op: 'send';
  to: string;
  body: string;
  summary?: string;
  priority?: 'low' | 'normal' | 'high' | 'urgent';
  kind?: 'message' | 'system';
  in_reply_to?: string;
}

export type DoorReply = { ok: true; header: Record<string, unknown> } | { ok: false; message: string; code?: string; exitCode?: number };

export type DoorHandler = (req: DoorSend) => Promise<Record<string, unknown>>;

export interface Door {
  readonly path: string;
  close(): void;
}

/** The environment variable naming a sandboxed command's door. */
export const DOOR_ENV = 'FLOTILLA_DOOR';

/** Listens on `path` (0600, in a 0700 folder) until `close()`; a request larger than `maxBytes` is refused. */
export async function openDoor(path: string, maxBytes: number, handle: DoorHandler): Promise<Door> {
  mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
  chmodSync(dirname(path), 0o700);
  rmSync(path, { force: true });
  const server: Server = createServer({ allowHalfOpen: true }, (sock) => {
    void readRequest(sock, maxBytes).then(async (req) => {
      if ('error' in req) return answer(sock, { ok: false, message: req.error });
      try {
        answer(sock, { ok: true, header: await handle(req) });
      } catch (err) {
        const known = err instanceof FlotillaError ? { code: err.code, exitCode: err.exitCode } : {};
        answer(sock, { ok: false, message: errorMessage(err), ...known });
      }
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(path, () => {
      server.off('error', reject);
      resolve();
    });
  });
  server.on('error', () => undefined);
  // The door never keeps a harness alive on its own.
  server.unref();
  chmodSync(path, 0o600);
  // A harness that exits without closing still leaves no socket behind.
  const onExit = () => rmSync(path, { force: true });
  process.once('exit', onExit);
  return {
    path,
    close() {
      process.off('exit', onExit);
      server.close();
      rmSync(path, { force: true });
    },
  };
}

function answer(sock: Socket, r: DoorReply): void {
  sock.end(JSON.stringify(r) + '\n');
}

function readRequest(sock: Socket, maxBytes: number): Promise<DoorSend | { error: string }> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let size = 0;
    sock.on('data', (c: Buffer) => {
      size += c.length;
      if (size <= maxBytes) chunks.push(c);
    });
    sock.on('error', () => resolve({ error: 'connection lost' }));
    sock.on('end', () => {
      if (size > maxBytes) return resolve({ error: `the request is over ${maxBytes} bytes — put large content in a file and send its path` });
      let req: Partial<DoorSend>;
      try {
        req = JSON.parse(Buffer.concat(chunks).toString('utf8')) as Partial<DoorSend>;
      } catch {
        return resolve({ error: 'malformed request: not JSON' });
      }
      if (req.op !== 'send' || typeof req.to !== 'string' || typeof req.body !== 'string') return resolve({ error: "malformed request: expected {op: 'send', to, body}" });
      resolve(req as DoorSend);
    });
  });
}

/** Sends one request through the door at `path`; resolves with the delivered header or throws the harness's one-line reason. */
export function sendThroughDoor(path: string, req: DoorSend, timeoutMs = 60_000): Promise<Record<string, unknown>> {
  return new Promise((resolve, reject) => {
    const sock = connect({ path, allowHalfOpen: true });
    const chunks: Buffer[] = [];
    const timer = setTimeout(() => {
      sock.destroy();
      reject(new FlotillaError(`the agent's harness did not answer on ${path} within ${timeoutMs / 1000} s — check it with flotilla status`, { code: 'door-timeout' }));
    }, timeoutMs);
    sock.on('connect', () => sock.end(JSON.stringify(req) + '\n'));
    sock.on('data', (c: Buffer) => chunks.push(c));
    sock.on('error', (err) => {
      clearTimeout(timer);
      reject(new FlotillaError(`cannot reach this agent's harness at ${path} (${errorMessage(err)}) — ${DOOR_ENV} is set only for a sandboxed agent's own commands`, { code: 'door-closed' }));
    });
    sock.on('end', () => {
      clearTimeout(timer);
      let reply: DoorReply;
      try {
        reply = JSON.parse(Buffer.concat(chunks).toString('utf8')) as DoorReply;
      } catch {
        return reject(new FlotillaError(`the agent's harness gave no answer on ${path} — check it with flotilla status`, { code: 'door-closed' }));
      }
      if (reply.ok) resolve(reply.header);
      else reject(new FlotillaError(reply.message, { code: reply.code ?? 'door-refused', ...(reply.exitCode ? { exitCode: reply.exitCode } : {}) }));
    });
  });
}
