// A spawn on a remote host (design §17) next to a local one: `spawn-agent --host r1 --oneshot`
// against a private OpenSSH server on 127.0.0.1 (its own host key and client key, nothing of
// ~/.ssh read) whose "host" is a second fleet root with its own tmux server, and the same
// spawn here. Wall time of spawn-agent until it exits (the id printed: the harness there has
// taken its slot). Real sshd, real tmux, the built CLI, a scripted model.
// Run: node bench/remote-spawn.mjs (prints JSON).
import { spawn, spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { percentile, round, SPAWN_AGENT, tempProject, tmuxKill } from './lib.mjs';

const FLOTILLA = fileURLToPath(new URL('../tools/flotilla', import.meta.url));

function run(file, args, env, cwd) {
  return new Promise((resolve) => {
    const t0 = performance.now();
    const child = spawn(file, args, { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (err += d));
    child.on('exit', (code) => resolve({ code, out: out.trim(), err, ms: performance.now() - t0 }));
  });
}

function freePort() {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });
}

/** A private sshd on 127.0.0.1 (as test/helpers/sshd.ts): returns its port, client options and a stop function. */
async function startSshd(dir) {
  const at = (n) => join(dir, n);
  for (const k of ['host_key', 'client_key'])
    spawnSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-f', at(k)], { stdio: 'ignore' });
  writeFileSync(at('authorized_keys'), readFileSync(at('client_key.pub')));
  mkdirSync('/run/sshd', { recursive: true, mode: 0o755 });
  const port = await freePort();
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
      'LogLevel ERROR',
      'MaxStartups 100:30:200',
    ].join('\n') + '\n',
  );
  const sshd = spawn('/usr/sbin/sshd', ['-D', '-e', '-f', at('sshd_config')], { stdio: 'ignore' });
  writeFileSync(
    at('known_hosts'),
    `[127.0.0.1]:${port} ${readFileSync(at('host_key.pub'), 'utf8').split(' ').slice(0, 2).join(' ')}\n`,
  );
  const options = [
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
    'StrictHostKeyChecking=yes',
    '-o',
    'LogLevel=ERROR',
  ];
  // Ready once ssh gets in.
  for (let i = 0; ; i++) {
    if (
      spawnSync('ssh', [...options, '-o', 'BatchMode=yes', '-p', String(port), 'root@127.0.0.1', 'true']).status === 0
    )
      break;
    if (i > 100) throw new Error('sshd did not start');
    await new Promise((r) => setTimeout(r, 100));
  }
  return { port, options, stop: () => sshd.kill('SIGTERM') };
}

export async function runRemoteSpawnBench({ spawns = 10 } = {}) {
  const here = tempProject('flotilla-bench-rspawn-');
  const far = tempProject('flotilla-bench-rspawn-far-');
  const keys = join(here.dir, 'ssh');
  mkdirSync(keys);
  const sshd = await startSshd(keys);
  const worker = join(here.dir, 'worker.yaml');
  writeFileSync(worker, 'replies:\n  - text: "done"\n');
  const socket = { here: `flotilla-bench-rs-${process.pid}`, far: `flotilla-bench-rsf-${process.pid}` };
  const farEnv = {
    PATH: process.env.PATH,
    HOME: far.dir,
    XDG_CONFIG_HOME: join(far.dir, 'xdg'),
    FLOTILLA_TMUX_SOCKET: socket.far,
  };
  mkdirSync(here.root, { recursive: true });
  const q = JSON.stringify;
  writeFileSync(
    join(here.root, 'config.yaml'),
    [
      'limits:',
      '  max_running: 32',
      'hosts:',
      '  r1:',
      '    ssh: root@127.0.0.1',
      `    port: ${sshd.port}`,
      `    ssh_options: [${sshd.options.map((o) => q(o)).join(', ')}]`,
      `    flotilla: ${q(FLOTILLA)}`,
      `    root: ${q(far.root)}`,
      `    cwd: ${q(far.dir)}`,
      `    env: {${Object.entries(farEnv)
        .map(([k, v]) => `${k}: ${q(v)}`)
        .join(', ')}}`,
    ].join('\n') + '\n',
  );
  mkdirSync(far.root, { recursive: true });
  writeFileSync(join(far.root, 'config.yaml'), 'limits:\n  max_running: 32\n');
  const env = {
    PATH: process.env.PATH,
    HOME: here.dir,
    XDG_CONFIG_HOME: join(here.dir, 'xdg'),
    FLOTILLA_TMUX_SOCKET: socket.here,
  };
  const local = [];
  const remote = [];
  const handshake = [];
  try {
    // The project's config names the host: trusted, as a person would (docs/security-trust.md "Folder trust").
    spawnSync(process.execPath, [fileURLToPath(new URL('../dist/cli/main.js', import.meta.url)), 'trust', here.dir], {
      cwd: here.dir,
      env,
      stdio: 'ignore',
    });
    for (let i = 0; i < spawns; i++) {
      for (const [where, list, extra] of [
        ['l', local, []],
        ['r', remote, ['--host', 'r1']],
      ]) {
        const r = await run(
          SPAWN_AGENT,
          [...extra, '--oneshot', '--id', `${where}${i}`, '--model', `script:${worker}`, 'go'],
          env,
          here.dir,
        );
        if (r.code !== 0) throw new Error(`spawn ${where}${i} failed: ${r.err}`);
        list.push(r.ms);
      }
      // ssh alone (connect, authenticate, run `true`): what a remote spawn pays before Flotilla starts there.
      const t = await run(
        'ssh',
        [...sshd.options, '-o', 'BatchMode=yes', '-p', String(sshd.port), 'root@127.0.0.1', 'true'],
        env,
        here.dir,
      );
      handshake.push(t.ms);
    }
    const stats = (v) => ({
      p50: round(percentile(v, 50)),
      p99: round(percentile(v, 99)),
      min: round(Math.min(...v)),
      max: round(Math.max(...v)),
    });
    return {
      spawns,
      local_spawn_ms: stats(local),
      remote_spawn_ms: stats(remote),
      ssh_true_ms: stats(handshake),
      ssh: "OpenSSH on 127.0.0.1 (no network latency): the figure is ssh's handshake and the remote CLI's start on top of a spawn",
    };
  } finally {
    tmuxKill(socket.here);
    tmuxKill(socket.far);
    sshd.stop();
    await new Promise((r) => setTimeout(r, 500));
    here.cleanup();
    far.cleanup();
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  console.log(JSON.stringify(await runRemoteSpawnBench(), null, 2));
}
