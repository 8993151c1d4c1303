import { execa } from 'execa';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { connect, createServer } from 'node:net';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { tempDir } from './fleet.js';
import { testHome } from './home.js';
import { requireTool } from './requires.js';
import { eventually } from './tmux.js';

/** The repository's `flotilla` command: what a remote host runs in the tests (the same build). */
export const FLOTILLA_COMMAND = fileURLToPath(new URL('../../tools/flotilla', import.meta.url));

/**
 * A real second "host": OpenSSH's server on 127.0.0.1 at a free port, with its own host key,
 * one authorized key made for the test, and a client configuration that reads nothing of the
 * tester's ~/.ssh (`-F /dev/null`, its own known_hosts and identity). Its logins get a pristine
 * home of their own (`home`), never the login user's real one. `kill()` stops it.
 */
export interface Sshd {
  port: number;
  /** ssh arguments (before the destination) that reach this server and nothing else. */
  clientOptions: string[];
  /** HOME of every login on this host: a pristine test home, so the login shell reads no real dotfiles. */
  home: string;
  /** The server's own log (sshd -e), for a failing test's message. */
  log(): string;
  kill(): Promise<void>;
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
  });
}

/** `home`: the logins' HOME, a test home the caller made and cleans up; a new pristine one if absent. */
export async function startSshd(opts: { home?: string } = {}): Promise<Sshd> {
  const sshd = requireTool('sshd');
  requireTool('ssh');
  const dir = tempDir('flotilla-sshd-');
  const at = (name: string) => join(dir.dir, name);
  const own = opts.home === undefined ? testHome('pristine') : undefined;
  const home = opts.home ?? own!.dir;
  await execa('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-C', 'flotilla-test-host', '-f', at('host_key')]);
  await execa('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-C', 'flotilla-test-client', '-f', at('client_key')]);
  writeFileSync(at('authorized_keys'), readFileSync(at('client_key.pub')));
  // sshd's privilege separation needs this directory; a machine without a running sshd may lack it.
  mkdirSync('/run/sshd', { recursive: true, mode: 0o755 });
  let child: ChildProcess | undefined;
  let log = '';
  let port = 0;
  // A port found free may be taken before sshd binds it: try a few.
  for (let attempt = 0; attempt < 5 && !child; attempt++) {
    port = await freePort();
    writeFileSync(
      at('sshd_config'),
      [
        `Port ${port}`,
        'ListenAddress 127.0.0.1',
        `HostKey ${at('host_key')}`,
        `PidFile ${at('sshd.pid')}`,
        `AuthorizedKeysFile ${at('authorized_keys')}`,
        'StrictModes no',
        'UsePAM no',
        'PasswordAuthentication no',
        'KbdInteractiveAuthentication no',
        'PermitRootLogin prohibit-password',
        'PrintMotd no',
        'PrintLastLog no',
        'LogLevel ERROR',
        'MaxStartups 100:30:200',
        'MaxSessions 100',
        // Logins are root's, but root's real ~/.bashrc (any dotfile of this machine) must not run:
        // sshd sets HOME from passwd, then SetEnv overrides it, and bash reads $HOME/.bashrc.
        `SetEnv HOME=${home}`,
      ].join('\n') + '\n',
    );
    const c = spawn(sshd, ['-D', '-e', '-f', at('sshd_config')], { stdio: ['ignore', 'ignore', 'pipe'] });
    c.stderr!.on('data', (b: Buffer) => {
      log += b.toString('utf8');
    });
    const exited = new Promise<boolean>((r) => c.once('exit', () => r(true)));
    const listening = eventually(() => canConnect(port), 30_000, `sshd on port ${port}`).then(() => false);
    if (await Promise.race([exited, listening])) continue;
    child = c;
  }
  if (!child) {
    own?.cleanup();
    dir.cleanup();
    throw new Error(`sshd did not start: ${log}`);
  }
  writeFileSync(
    at('known_hosts'),
    `[127.0.0.1]:${port} ${readFileSync(at('host_key.pub'), 'utf8').split(' ').slice(0, 2).join(' ')}\n`,
  );
  const clientOptions = [
    '-F',
    '/dev/null',
    '-i',
    at('client_key'),
    '-o',
    'IdentitiesOnly=yes',
    '-o',
    'IdentityAgent=none',
    '-o',
    `UserKnownHostsFile=${at('known_hosts')}`,
    '-o',
    'GlobalKnownHostsFile=/dev/null',
    '-o',
    'StrictHostKeyChecking=yes',
    '-o',
    'LogLevel=ERROR',
  ];
  const running = child;
  return {
    port,
    clientOptions,
    home,
    log: () => log,
    async kill() {
      if (running.exitCode === null) {
        const gone = new Promise((r) => running.once('exit', r));
        running.kill('SIGTERM');
        await gone;
      }
      dir.cleanup();
      own?.cleanup();
    },
  };
}

function canConnect(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = connect(port, '127.0.0.1');
    s.once('connect', () => {
      s.destroy();
      resolve(true);
    });
    s.once('error', () => resolve(false));
  });
}

/** A `hosts:` entry (YAML, indented under `hosts:`) for this server as `root@127.0.0.1`. */
export function hostYaml(
  name: string,
  sshd: Sshd,
  remote: { root?: string; cwd?: string; env?: Record<string, string>; flotilla?: string; extra?: string } = {},
): string {
  const q = (s: string) => JSON.stringify(s);
  const lines = [
    `  ${name}:`,
    `    ssh: root@127.0.0.1`,
    `    port: ${sshd.port}`,
    `    ssh_options: [${sshd.clientOptions.map(q).join(', ')}]`,
    `    flotilla: ${q(remote.flotilla ?? FLOTILLA_COMMAND)}`,
    ...(remote.root ? [`    root: ${q(remote.root)}`] : []),
    ...(remote.cwd ? [`    cwd: ${q(remote.cwd)}`] : []),
    ...(remote.env
      ? [
          `    env: {${Object.entries(remote.env)
            .map(([k, v]) => `${k}: ${q(v)}`)
            .join(', ')}}`,
        ]
      : []),
    ...(remote.extra ? [remote.extra] : []),
  ];
  return lines.join('\n') + '\n';
}
