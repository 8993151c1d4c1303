import { accessSync, chmodSync, constants, mkdirSync, rmSync } from 'node:fs';
import type { Server, Socket } from 'node:net';
import { dirname } from 'node:path';
import { errorMessage, FlotillaError } from '../errors.js';

// Loaded when a door is opened or called: `flotilla send` from a person's shell asks only
// whether the fleet is writable and never needs sockets (§14).
const net = (): typeof import('node:net') => process.getBuiltinModule('node:net');

/**
 * An agent's door (§11, docs/security.md "The door"): a Unix socket its harness listens on,
 * through which the agent's commands reach the fleet. Every `flotilla send` from an agent's
 * command comes through it, in every sandbox mode, so the harness redacts what it holds and
 * `from` is its word. Inside the sandbox it is the only way: the fleet root is read-only
 * there and the process ancestry is the sandbox's own, so a command can neither write an
 * inbox nor prove who it is. There the socket is bound into that agent's sandbox only (the
 * doors folder is hidden), so who can connect is that agent.
 *
 * Operations: `send` (the harness delivers as the agent), `whoami` (the agent's id: identity
 * inside the sandbox), `run` (a fleet command — spawn, run, cancel, inbox, task — that the harness
 * runs on the host as its own child, so ancestry makes the agent its caller), `pipe` (the same
 * for `flotilla mcp`, its stdio joined to the connection).
 *
 * Protocol: one JSON request line, then half-close; one JSON reply line. A `pipe` request's
 * line is followed by the command's input, and the reply is its output.
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

export interface DoorWhoami {
  op: 'whoami';
}

/** A fleet command (`flotilla <args…>`) the harness runs for its agent; `cwd` is the caller's. */
export interface DoorRun {
  op: 'run';
  args: string[];
  cwd?: string;
  stdin?: string;
}

/**
 * A long-lived fleet command (`flotilla mcp`) the harness runs for its agent with its stdio
 * joined to the connection: after the request line, bytes flow both ways until either side ends.
 */
export interface DoorPipe {
  op: 'pipe';
  args: string[];
  cwd?: string;
}

export type DoorRequest = DoorSend | DoorWhoami | DoorRun;

/** What a `run` gives back: the command's output and exit code. */
export interface DoorRunResult {
  stdout: string;
  stderr: string;
  exitCode: number;
}

export type DoorReply =
  { ok: true; header: Record<string, unknown> } | { ok: false; message: string; code?: string; exitCode?: number };

/** Answers one request; `closed` aborts when the caller hangs up first (a `run` then stops its command). */
export type DoorHandler = (req: DoorRequest, closed: AbortSignal) => Promise<Record<string, unknown>>;

export interface Door {
  readonly path: string;
  close(): void;
}

/** The environment variable naming an agent's door, set for each of its commands. */
export const DOOR_ENV = 'FLOTILLA_DOOR';

/**
 * Set ('1') for the commands of a harness that holds the bus's credentials (a `nats://` fleet
 * with authentication): the commands do not hold them (tools/command-env.ts), so their fleet
 * commands — DOOR_COMMANDS and DOOR_BUS_COMMANDS — go through the door wherever the fleet
 * root is writable too, and the harness runs them with its credentials.
 */
export const DOOR_BUS_ENV = 'FLOTILLA_DOOR_BUS';

/** What a command reads from the bus: forwarded only for a harness that holds the bus's credentials (DOOR_BUS_ENV). */
export const DOOR_BUS_COMMANDS: ReadonlySet<string> = new Set(['status']);

/**
 * The fleet commands a command has its harness run (`run`) where the fleet root is read-only
 * to it: those that write fleet state. Everything else only reads (and runs where it is) or
 * is a person's alone (`approve`, `deny`, `trust`: refused for an agent wherever it runs).
 * `run` is a spawn-and-wait: the harness's child runs the one-shot agent, a child of this
 * agent by ancestry (its depth, caps and budget), and its answer comes back as the output.
 */
export const DOOR_COMMANDS: ReadonlySet<string> = new Set([
  'spawn',
  'run',
  'cancel',
  'inbox',
  'task',
  'wait',
  'collect',
  'lease',
]);

/**
 * The commands whose task may come on stdin (`echo task | spawn-agent`, `… | flotilla run`): it goes through the door
 * with them.
 */
export const DOOR_STDIN_COMMANDS: ReadonlySet<string> = new Set(['spawn', 'run', 'runtime-hook']);

/**
 * The commands a door joins to its connection (`pipe`): `flotilla mcp`, whose writing tools must act on the host as the
 * agent.
 */
export const DOOR_PIPE_COMMANDS: ReadonlySet<string> = new Set(['mcp']);

/**
 * What only a vendor CLI's shim forwards (harness/cli-host/sandboxed-cli.ts): the CLI's hooks,
 * which write the agent's record, audit and approvals. A harness's door refuses them.
 */
export const VENDOR_DOOR_COMMANDS: ReadonlySet<string> = new Set(['runtime-hook']);

/**
 * Whether the fleet state behind a door (`<root>/state/doors/<id>.sock`) is writable here:
 * false inside the sandbox (bound read-only), where the harness must do the writing.
 */
export function fleetWritable(doorPath: string): boolean {
  try {
    accessSync(dirname(dirname(doorPath)), constants.W_OK);
    return true;
  } catch {
    return false;
  }
}

/** Joins a `pipe` request's command to the connection: `rest` is what came after the request line. */
export type DoorPiper = (req: DoorPipe, sock: Socket, rest: Buffer) => void;

/** Listens on `path` (0600, in a 0700 folder) until `close()`; a request larger than `maxBytes` is refused. */
export async function openDoor(path: string, maxBytes: number, handle: DoorHandler, pipe?: DoorPiper): Promise<Door> {
  mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
  chmodSync(dirname(path), 0o700);
  rmSync(path, { force: true });
  const server: Server = net().createServer({ allowHalfOpen: true }, (sock) => {
    void readRequest(sock, maxBytes).then(async (req) => {
      if ('pipe' in req) {
        if (!pipe) return answer(sock, { ok: false, message: 'this door joins no command to its connection' });
        return pipe(req.pipe, sock, req.rest);
      }
      if ('error' in req) return answer(sock, { ok: false, message: req.error });
      const hangUp = new AbortController();
      sock.once('close', () => hangUp.abort());
      try {
        answer(sock, { ok: true, header: await handle(req, hangUp.signal) });
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
  if (!sock.destroyed) sock.end(JSON.stringify(r) + '\n');
}

/** The request if its shape is one of the operations, else why not. */
function validRequest(req: Partial<DoorSend> & Partial<DoorRun> & { op?: unknown }): DoorRequest | { error: string } {
  if (req.op === 'send' && typeof req.to === 'string' && typeof req.body === 'string') return req as DoorSend;
  if (req.op === 'whoami') return { op: 'whoami' };
  if (
    req.op === 'run' &&
    Array.isArray(req.args) &&
    req.args.every((a) => typeof a === 'string') &&
    (req.cwd === undefined || typeof req.cwd === 'string') &&
    (req.stdin === undefined || typeof req.stdin === 'string')
  ) {
    return req as DoorRun;
  }
  return { error: "malformed request: expected {op: 'send', to, body}, {op: 'whoami'} or {op: 'run', args}" };
}

function readRequest(
  sock: Socket,
  maxBytes: number,
): Promise<DoorRequest | { error: string } | { pipe: DoorPipe; rest: Buffer }> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let first = true;
    const onData = (c: Buffer) => {
      size += c.length;
      if (size <= maxBytes) chunks.push(c);
      // A pipe request is known by its first line; what follows it is the command's input.
      const all = first ? Buffer.concat(chunks) : undefined;
      const nl = all ? all.indexOf(10) : -1;
      if (!all || nl === -1) return;
      first = false;
      const piped = pipeRequest(all.subarray(0, nl).toString('utf8'));
      if (!piped) return;
      sock.off('data', onData);
      sock.pause();
      resolve({ pipe: piped, rest: all.subarray(nl + 1) });
    };
    sock.on('data', onData);
    sock.on('error', () => resolve({ error: 'connection lost' }));
    sock.on('end', () => {
      if (size > maxBytes)
        return resolve({
          error: `the request is over ${maxBytes} bytes — put large content in a file and send its path`,
        });
      let req: Parameters<typeof validRequest>[0];
      try {
        req = JSON.parse(Buffer.concat(chunks).toString('utf8')) as typeof req;
      } catch {
        return resolve({ error: 'malformed request: not JSON' });
      }
      resolve(
        req !== null && typeof req === 'object' ? validRequest(req) : { error: 'malformed request: not an object' },
      );
    });
  });
}

function pipeRequest(line: string): DoorPipe | undefined {
  try {
    const req = JSON.parse(line) as Partial<DoorPipe> | null;
    if (req?.op !== 'pipe' || !Array.isArray(req.args) || !req.args.every((a) => typeof a === 'string'))
      return undefined;
    return { op: 'pipe', args: req.args, ...(typeof req.cwd === 'string' ? { cwd: req.cwd } : {}) };
  } catch {
    return undefined;
  }
}

/**
 * Sends one request through the door at `path`; resolves with the harness's reply (a send's
 * delivered header, `{id}` for whoami, a run's output) or throws its one-line reason.
 * `timeoutMs: 0` waits as long as the harness takes (a `run` of `spawn-agent --wait`).
 */
export function sendThroughDoor(path: string, req: DoorRequest, timeoutMs = 60_000): Promise<Record<string, unknown>> {
  return new Promise((resolve, reject) => {
    const sock = net().connect({ path, allowHalfOpen: true });
    const chunks: Buffer[] = [];
    const timer =
      timeoutMs > 0
        ? setTimeout(() => {
            sock.destroy();
            reject(
              new FlotillaError(
                `the agent's harness did not answer on ${path} within ${timeoutMs / 1000} s — check it with flotilla status`,
                { code: 'door-timeout' },
              ),
            );
          }, timeoutMs)
        : undefined;
    sock.on('connect', () => sock.end(JSON.stringify(req) + '\n'));
    sock.on('data', (c: Buffer) => chunks.push(c));
    sock.on('error', (err) => {
      clearTimeout(timer);
      reject(
        new FlotillaError(
          `cannot reach this agent's harness at ${path} (${errorMessage(err)}) — ${DOOR_ENV} is set only for a sandboxed agent's own commands`,
          { code: 'door-closed' },
        ),
      );
    });
    sock.on('end', () => {
      clearTimeout(timer);
      let reply: DoorReply;
      try {
        reply = JSON.parse(Buffer.concat(chunks).toString('utf8')) as DoorReply;
      } catch {
        return reject(
          new FlotillaError(`the agent's harness gave no answer on ${path} — check it with flotilla status`, {
            code: 'door-closed',
          }),
        );
      }
      if (reply.ok) resolve(reply.header);
      else
        reject(
          new FlotillaError(reply.message, {
            code: reply.code ?? 'door-refused',
            ...(reply.exitCode ? { exitCode: reply.exitCode } : {}),
          }),
        );
    });
  });
}

/**
 * Joins this process's stdio to a command the harness runs for it (`pipe`): stdin goes to
 * the command, its stdout comes back, until either side ends. Resolves when the connection closes.
 */
export function pipeThroughDoor(
  path: string,
  req: DoorPipe,
  input: NodeJS.ReadableStream,
  output: NodeJS.WritableStream,
): Promise<void> {
  return new Promise((resolve, reject) => {
    const sock = net().connect({ path, allowHalfOpen: true });
    sock.on('connect', () => {
      sock.write(JSON.stringify(req) + '\n');
      input.pipe(sock);
      sock.pipe(output);
    });
    sock.on('error', (err) =>
      reject(
        new FlotillaError(`cannot reach this agent's harness at ${path} (${errorMessage(err)})`, {
          code: 'door-closed',
        }),
      ),
    );
    sock.on('close', () => resolve());
  });
}
