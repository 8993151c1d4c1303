import { execa, execaSync, type ResultPromise } from 'execa';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { connect, createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
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
  /** With `tls`: the throwaway CA's certificate (PEM file) that signed the server's. */
  readonly caFile: string | undefined;
  start(): Promise<void>;
  stop(): Promise<void>;
  /** Stops the server and removes its store. */
  kill(): Promise<void>;
  /**
   * With `monitor`: how many messages the server has sent to clients so far (its /varz
   * `out_msgs`), so a test can count what one read fetched — every record a read pulls is a
   * message — without timing anything.
   */
  messagesSent(): Promise<number>;
}

/**
 * How the server authenticates clients (none by default): a token, one user with a password,
 * or accounts (`accounts`: account name → its one user's name and password, each account with
 * its own JetStream, as docs/scale-out.md "Two fleets on one server" configures). `tls` makes
 * a throwaway CA with openssl and serves TLS only, with a certificate it signed for 127.0.0.1.
 */
export interface NatsAuth {
  token?: string;
  user?: { user: string; password: string };
  accounts?: Record<string, { user: string; password: string }>;
  tls?: boolean;
  /** Serve the monitoring endpoint (/varz) on a free port of 127.0.0.1, for messagesSent(). */
  monitor?: boolean;
}

export async function natsServer(auth: NatsAuth = {}): Promise<NatsServer> {
  const bin = requireTool('nats-server');
  const port = await freePort();
  const monitorPort = auth.monitor ? await freePort() : undefined;
  const store = mkdtempSync(join(tmpdir(), 'flotilla-nats-'));
  const caFile = auth.tls ? throwawayCertificates(store) : undefined;
  const confFile = join(store, 'server.conf');
  writeFileSync(
    confFile,
    serverConfig(port, join(store, 'js'), auth) + (monitorPort ? `http: "127.0.0.1:${monitorPort}"\n` : ''),
  );
  let proc: ResultPromise | undefined;
  const up = async () => {
    // Already up: a second server on the port would only die of it, and leave this one unowned.
    if (proc && proc.exitCode === null) return;
    const started = execa(bin, ['-c', confFile], { reject: false, stdout: 'ignore', stderr: 'pipe', buffer: true });
    proc = started;
    // A server that dies on its own once up (not by stop/kill) fails the tests after it with "connection refused"
    // only: what it said last goes to the test output, so a failure shows why.
    let ready = false;
    void started.then((r) => {
      if (ready && proc === started)
        process.stderr.write(
          `nats-server on port ${port} exited unexpectedly (${r.signal ?? r.exitCode}): ${String(r.stderr).slice(-3000)}\n`,
        );
    });
    // Ready once it accepts connections; a server that died says why.
    await eventually(
      async () => {
        if (proc!.exitCode !== null) throw new Error(`nats-server exited: ${String((await proc!).stderr)}`);
        await canConnect(port);
        return true;
      },
      30_000,
      'nats-server accepting connections',
    );
    ready = true;
  };
  const down = async () => {
    if (!proc) return;
    const stopping = proc;
    proc = undefined;
    stopping.kill('SIGKILL');
    await stopping;
  };
  await up();
  return {
    url: `${auth.tls ? 'tls' : 'nats'}://127.0.0.1:${port}`,
    port,
    caFile,
    start: up,
    stop: down,
    kill: async () => {
      await down();
      rmSync(store, { recursive: true, force: true });
    },
    messagesSent: async () => {
      if (!monitorPort) throw new Error('messagesSent() needs natsServer({ monitor: true })');
      const varz = (await (await fetch(`http://127.0.0.1:${monitorPort}/varz`)).json()) as { out_msgs: number };
      return varz.out_msgs;
    },
  };
}

/** nats-server's config: JSON is a subset of its format, so values are quoted as JSON. */
function serverConfig(port: number, storeDir: string, auth: NatsAuth): string {
  const q = (v: string) => JSON.stringify(v);
  const lines = [`listen: ${q(`127.0.0.1:${port}`)}`, `jetstream { store_dir: ${q(storeDir)} }`];
  if (auth.token) lines.push(`authorization { token: ${q(auth.token)} }`);
  if (auth.user)
    lines.push(`authorization { users: [ { user: ${q(auth.user.user)}, password: ${q(auth.user.password)} } ] }`);
  if (auth.accounts) {
    const accounts = Object.entries(auth.accounts).map(
      ([name, u]) => `  ${name}: { jetstream: enabled, users: [ { user: ${q(u.user)}, password: ${q(u.password)} } ] }`,
    );
    lines.push('accounts {', ...accounts, '}');
  }
  if (auth.tls) {
    const dir = dirname(storeDir);
    lines.push(`tls { cert_file: ${q(join(dir, 'server.pem'))}, key_file: ${q(join(dir, 'server.key'))} }`);
  }
  return lines.join('\n') + '\n';
}

/** A CA made for this server alone and a server certificate it signed for 127.0.0.1; returns the CA's PEM file. */
function throwawayCertificates(dir: string): string {
  const openssl = requireTool('openssl');
  const ssl = (args: string[]) => execaSync(openssl, args, { cwd: dir, stdio: 'pipe' });
  const ec = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'];
  ssl(['req', '-x509', ...ec, '-keyout', 'ca.key', '-out', 'ca.pem', '-days', '1', '-subj', '/CN=flotilla test CA']);
  ssl(['req', ...ec, '-keyout', 'server.key', '-out', 'server.csr', '-subj', '/CN=127.0.0.1']);
  writeFileSync(join(dir, 'san.ext'), 'subjectAltName=IP:127.0.0.1,DNS:localhost\n');
  ssl([
    'x509',
    '-req',
    '-in',
    'server.csr',
    '-CA',
    'ca.pem',
    '-CAkey',
    'ca.key',
    '-CAcreateserial',
    '-out',
    'server.pem',
    '-days',
    '1',
    '-extfile',
    'san.ext',
  ]);
  return join(dir, 'ca.pem');
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
    s.once('connect', () => {
      s.destroy();
      resolve();
    });
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
