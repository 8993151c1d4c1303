import { execa, type ResultPromise } from 'execa';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { connect, createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { requireTool } from './requires.js';
import { eventually } from './tmux.js';

/**
 * A real NATS server with JetStream (Debian's `nats-server`) on a free port and its own
 * store directory, for one test file: `stop()` kills it (SIGKILL, as a crash would) and
 * `start()` brings it back on the same port and store, so tests can take the bus away.
 */
export interface NatsServer {
  readonly url: string;
  readonly port: number;
  start(): Promise<void>;
  stop(): Promise<void>;
  /** Stops the server and removes its store. */
  kill(): Promise<void>;
}

export async function natsServer(): Promise<NatsServer> {
  const bin = requireTool('nats-server');
  const port = await freePort();
  const store = mkdtempSync(join(tmpdir(), 'flotilla-nats-'));
  let proc: ResultPromise | undefined;
  const up = async () => {
    proc = execa(bin, ['-js', '-a', '127.0.0.1', '-p', String(port), '-sd', store], { reject: false, stdout: 'ignore', stderr: 'pipe', buffer: true });
    // Ready once it accepts connections; a server that died says why.
    await eventually(async () => {
      if (proc!.exitCode !== null) throw new Error(`nats-server exited: ${String((await proc!).stderr)}`);
      await canConnect(port);
      return true;
    }, 30_000, 'nats-server accepting connections');
  };
  const down = async () => {
    if (!proc) return;
    proc.kill('SIGKILL');
    await proc;
    proc = undefined;
  };
  await up();
  return {
    url: `nats://127.0.0.1:${port}`,
    port,
    start: up,
    stop: down,
    kill: async () => {
      await down();
      rmSync(store, { recursive: true, force: true });
    },
  };
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as { port: number };
      srv.close(() => resolve(port));
    });
  });
}

function canConnect(port: number): Promise<void> {
  return new Promise((resolve, reject) => {
    const s = connect(port, '127.0.0.1');
    s.once('connect', () => { s.destroy(); resolve(); });
    s.once('error', reject);
  });
}

/** The buses every guarantee test runs on (docs/design.md §18): one nats-server per file. */
export const BUSES = [{ bus: 'maildir' }, { bus: 'nats' }] as const;
export type BusKind = (typeof BUSES)[number]['bus'];

/**
 * Names the bus in the person's config under XDG_CONFIG_HOME, as a person does, so every
 * process of the fleet (spawners, harnesses, reapers, pane-died hooks) uses it. On `maildir`
 * nothing is written: the default.
 */
export function personBus(xdgConfigHome: string, kind: BusKind, server: NatsServer | undefined): void {
  if (kind === 'maildir') return;
  if (!server) throw new Error('a nats:// run needs its nats-server started first');
  mkdirSync(join(xdgConfigHome, 'flotilla'), { recursive: true });
  writeFileSync(join(xdgConfigHome, 'flotilla', 'config.yaml'), `fleet:\n  bus: ${server.url}\n`);
}
