import { StringDecoder } from 'node:string_decoder';

/**
 * MCP's stdio wire (§13): JSON-RPC 2.0, one message per line, both ways. The fleet server answers the client's
 * requests with `handlers`, hears its notifications, and sends requests of its own (a ping), matched to their answers
 * by id. A request the client cancels (`notifications/cancelled`) has its handler's signal aborted and gets no answer,
 * as the protocol asks. docs/decisions.md says why this is ours and not the MCP SDK's server.
 */
export type RequestHandler = (params: Record<string, unknown>, signal: AbortSignal) => unknown;

export class RpcError extends Error {
  constructor(
    readonly code: number,
    message: string,
  ) {
    super(message);
  }
}

/** JSON-RPC's own error codes. */
export const INVALID_PARAMS = -32602;
const PARSE_ERROR = -32700;
const INVALID_REQUEST = -32600;
const METHOD_NOT_FOUND = -32601;
const INTERNAL_ERROR = -32603;

type Id = string | number;
interface Message {
  jsonrpc?: unknown;
  id?: Id | null;
  method?: unknown;
  params?: unknown;
  result?: unknown;
  error?: { message?: unknown };
}

export interface RpcPeer {
  /** A request to the client: its result, or a rejection (its error, no answer within `timeoutMs`, the end). */
  request(method: string, params: Record<string, unknown> | undefined, timeoutMs: number): Promise<unknown>;
  /** Resolves once the connection has ended: the client's end of input, a read error, or `close()`. */
  closed: Promise<void>;
  close(): Promise<void>;
}

/**
 * `maxLine`: the most characters a message may have; the rest of a longer line is dropped unread (not held until its
 * newline comes, which a client may never send), and the client is told so once.
 */
export function serveJsonRpc(
  io: { stdin: NodeJS.ReadableStream; stdout: NodeJS.WritableStream },
  handlers: Record<string, RequestHandler>,
  notifications: Record<string, (params: Record<string, unknown>) => void>,
  maxLine: number,
): RpcPeer {
  const running = new Map<Id, AbortController>();
  const asked = new Map<Id, Waiting>();
  let nextId = 0;
  let ended = false;
  let endNow!: () => void;
  const closed = new Promise<void>((resolve) => (endNow = resolve));
  const send = (m: object) => {
    if (!ended) io.stdout.write(`${JSON.stringify({ jsonrpc: '2.0', ...m })}\n`);
  };
  const answer = async (id: Id, method: string, params: Record<string, unknown>) => {
    const handler = Object.hasOwn(handlers, method) ? handlers[method] : undefined;
    if (!handler) return send({ id, error: { code: METHOD_NOT_FOUND, message: `Method not found: ${method}` } });
    const abort = new AbortController();
    running.set(id, abort);
    try {
      const result = await handler(params, abort.signal);
      if (!abort.signal.aborted) send({ id, result });
    } catch (err) {
      const code = err instanceof RpcError ? err.code : INTERNAL_ERROR;
      if (!abort.signal.aborted) send({ id, error: { code, message: (err as Error).message } });
    } finally {
      running.delete(id);
    }
  };
  const cancelled = (params: Record<string, unknown>) => running.get(params.requestId as Id)?.abort(params.reason);
  const take = (line: string) => {
    let m: Message;
    try {
      m = JSON.parse(line) as Message;
    } catch {
      return send({ id: null, error: { code: PARSE_ERROR, message: 'Parse error: a line that is not JSON' } });
    }
    if (!m || typeof m !== 'object' || m.jsonrpc !== '2.0')
      return send({ id: null, error: { code: INVALID_REQUEST, message: 'Invalid Request: not JSON-RPC 2.0' } });
    const params = (m.params && typeof m.params === 'object' ? m.params : {}) as Record<string, unknown>;
    if (typeof m.method === 'string') {
      if (m.id === undefined || m.id === null) {
        if (m.method === 'notifications/cancelled') cancelled(params);
        else if (Object.hasOwn(notifications, m.method)) notifications[m.method]!(params);
        return;
      }
      return void answer(m.id, m.method, params);
    }
    const waiting = m.id === undefined || m.id === null ? undefined : asked.get(m.id);
    if (!waiting) return;
    asked.delete(m.id!);
    if (m.error) waiting.reject(new Error(String(m.error.message ?? 'the client answered with an error')));
    else waiting.resolve(m.result);
  };
  const onData = lineReader(maxLine, take, () => {
    const message = `Invalid Request: a message over ${maxLine} characters, dropped — send less in one message`;
    send({ id: null, error: { code: INVALID_REQUEST, message } });
  });
  const end = () => {
    if (ended) return;
    ended = true;
    io.stdin.off('data', onData);
    io.stdin.off('end', end);
    io.stdin.off('error', end);
    for (const abort of running.values()) abort.abort('the connection ended');
    for (const waiting of asked.values()) waiting.reject(new Error('the connection ended'));
    asked.clear();
    endNow();
  };
  io.stdin.on('data', onData);
  io.stdin.once('end', end);
  io.stdin.once('error', end);
  return {
    request: (method, params, timeoutMs) =>
      ended
        ? Promise.reject(new Error('the connection ended'))
        : ask(asked, send, { id: `flotilla-${nextId++}`, method, params }, timeoutMs),
    closed,
    close: () => {
      end();
      return closed;
    },
  };
}

/**
 * The wire's lines, each given to `take` whole: a character split between two reads is decoded once its last byte
 * has come, and a line over `maxLine` characters is dropped as it comes, up to its newline (`tooLong` once per line).
 */
function lineReader(
  maxLine: number,
  take: (line: string) => void,
  tooLong: () => void,
): (chunk: Buffer | string) => void {
  const utf8 = new StringDecoder('utf8');
  let rest = '';
  let dropping = false;
  return (chunk) => {
    let text = typeof chunk === 'string' ? chunk : utf8.write(chunk);
    if (dropping) {
      const newline = text.indexOf('\n');
      if (newline === -1) return;
      dropping = false;
      text = text.slice(newline + 1);
    }
    const lines = (rest + text).split('\n');
    rest = lines.pop()!;
    for (const line of lines) if (line.trim()) take(line);
    if (rest.length <= maxLine) return;
    rest = '';
    dropping = true;
    tooLong();
  };
}

type Waiting = { resolve(v: unknown): void; reject(e: Error): void };

/** Sends a request of the server's own; its answer (or none within `timeoutMs`) settles the promise. */
function ask(
  asked: Map<Id, Waiting>,
  send: (m: object) => void,
  req: { id: string; method: string; params: Record<string, unknown> | undefined },
  timeoutMs: number,
): Promise<unknown> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      asked.delete(req.id);
      reject(new Error(`no answer to ${req.method} within ${timeoutMs} ms`));
    }, timeoutMs);
    const settle =
      <T>(then: (v: T) => void) =>
      (v: T) => {
        clearTimeout(timer);
        then(v);
      };
    asked.set(req.id, { resolve: settle(resolve), reject: settle(reject) });
    send({ id: req.id, method: req.method, ...(req.params ? { params: req.params } : {}) });
  });
}
