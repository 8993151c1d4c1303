import { spawn } from 'node:child_process';
import type { HostEntry } from '../config/hosts-schema.js';
import { FlotillaError } from '../errors.js';
import { shellQuote } from '../tmux/quote.js';

/**
 * Everything Flotilla does on another host goes through one ssh command line built here
 * (docs/design.md §17): BatchMode so nothing ever prompts (a missing key is an error, not a
 * hung agent), the person's own options, and one remote command string that runs the
 * configured `flotilla` with the host's environment and fleet root.
 */

/** A configured host with its name. */
export interface Host extends HostEntry {
  name: string;
}

/** What a remote command printed and how it ended. */
export interface RemoteResult {
  exitCode: number;
  stdout: string;
  stderr: string;
}

/** ssh's exit status when it could not connect or authenticate (ssh(1), EXIT STATUS). */
const SSH_FAILED = 255;

/** One word for the remote sh: `~/x` keeps its tilde (expanded there), anything else is quoted. */
function remoteWord(word: string): string {
  return word.startsWith('~/') ? `~/${shellQuote(word.slice(2))}` : shellQuote(word);
}

/** The remote command line that runs `flotilla <args>` on the host, in its cwd, with its env and root. */
export function remoteFlotillaCommand(host: Host, args: readonly string[], opts: { tty?: boolean } = {}): string {
  // The host calls itself by the name it has here, so both sides group its agents alike (§17).
  const env = Object.entries({ FLOTILLA_HOST: host.name, ...host.env }).map(([k, v]) => `${k}=${remoteWord(v)}`);
  const root = host.root ? ['--root', remoteWord(host.root)] : [];
  const run = [
    ...(env.length ? ['env', ...env] : []),
    remoteWord(host.flotilla),
    ...root,
    ...args.map(shellQuote),
  ].join(' ');
  // `exec` so a signal to ssh's remote side reaches flotilla itself; a tty run keeps sh for the terminal.
  const body = opts.tty ? run : `exec ${run}`;
  return host.cwd ? `cd ${remoteWord(host.cwd)} && ${body}` : body;
}

/** ssh's argv (without `ssh`) for one remote command line. */
export function sshArgv(host: Host, remote: string, opts: { tty?: boolean } = {}): string[] {
  return [
    '-o',
    'BatchMode=yes',
    '-o',
    `ConnectTimeout=${host.connect_timeout_secs}`,
    ...(opts.tty ? ['-t'] : ['-T']),
    ...(host.port ? ['-p', String(host.port)] : []),
    ...host.ssh_options,
    '--',
    host.ssh,
    remote,
  ];
}

/** The error for a host ssh could not reach, with what to try. */
export function unreachable(host: Host, stderr: string): FlotillaError {
  const why = stderr.trim().split('\n').filter(Boolean).pop() ?? 'ssh failed';
  return new FlotillaError(
    `host '${host.name}' (${host.ssh}) is unreachable: ${why} — check that 'ssh -o BatchMode=yes ${host.ssh} true' works without a prompt (hosts.${host.name} in config.yaml)`,
    { code: 'host-unreachable' },
  );
}

/**
 * Runs `flotilla <args>` on the host and collects its output. Throws `host-unreachable`
 * when ssh itself failed; any other exit is the remote command's, returned as data.
 */
export async function runRemoteFlotilla(
  host: Host,
  args: readonly string[],
  opts: SshOptions = {},
): Promise<RemoteResult> {
  const r = await runSsh(host, remoteFlotillaCommand(host, args), opts);
  if (r.exitCode === SSH_FAILED) throw unreachable(host, r.stderr);
  return r;
}

export interface SshOptions {
  input?: string;
  env?: NodeJS.ProcessEnv;
  /** Aborting ends ssh (and the call rejects with the signal's reason). */
  signal?: AbortSignal;
}

/** Runs one remote command line through ssh; never throws on an exit status. */
export function runSsh(host: Host, remote: string, opts: SshOptions = {}): Promise<RemoteResult> {
  return new Promise((resolve, reject) => {
    if (opts.signal?.aborted) return reject(opts.signal.reason);
    const child = spawn('ssh', sshArgv(host, remote), {
      stdio: ['pipe', 'pipe', 'pipe'],
      env: opts.env ?? process.env,
    });
    const onAbort = () => {
      child.kill('SIGTERM');
      reject(opts.signal!.reason);
    };
    opts.signal?.addEventListener('abort', onAbort, { once: true });
    child.on('close', () => opts.signal?.removeEventListener('abort', onAbort));
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    child.stdout.on('data', (b: Buffer) => out.push(b));
    child.stderr.on('data', (b: Buffer) => err.push(b));
    child.on('error', (e) =>
      reject(
        new FlotillaError(
          `cannot run ssh for host '${host.name}': ${e.message} — install the OpenSSH client (apt-get install openssh-client)`,
          { code: 'ssh-missing', cause: e },
        ),
      ),
    );
    child.on('close', (code, signal) =>
      resolve({
        exitCode: code ?? (signal ? 128 : 1),
        stdout: Buffer.concat(out).toString('utf8'),
        stderr: Buffer.concat(err).toString('utf8'),
      }),
    );
    child.stdin.on('error', () => {
      /* the remote side may close its stdin early */
    });
    child.stdin.end(opts.input ?? '');
  });
}
