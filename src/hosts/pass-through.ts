import { spawn } from 'node:child_process';
import { FlotillaError } from '../errors.js';
import { remoteFlotillaCommand, sshArgv, unreachable, type Host } from './ssh.js';

/** The remote shell's status when it found no such command (sh(1)). */
const NOT_FOUND = 127;
/** ssh's own status when it could not connect or authenticate (ssh(1)). */
const SSH_FAILED = 255;

/**
 * Runs `flotilla <args>` on the host with its stdout passed through as it comes (a spawn's
 * id, `wait`'s answers, `output`'s text) and `input` on its stdin. Its stderr is held until
 * it ends, so a host ssh cannot reach gives one line saying what to do rather than ssh's own
 * words first (docs/decisions.md "A remote spawn's stderr is held until it ends"). Resolves to
 * the remote command's exit status; rejects with `host-unreachable` or `host-missing-flotilla`.
 */
export function passThrough(host: Host, args: readonly string[], input = ''): Promise<number> {
  return new Promise((resolve, reject) => {
    const child = spawn('ssh', sshArgv(host, remoteFlotillaCommand(host, args)), {
      stdio: ['pipe', 'inherit', 'pipe'],
    });
    const err: Buffer[] = [];
    child.stderr.on('data', (b: Buffer) => err.push(b));
    child.on('error', (e) =>
      reject(
        new FlotillaError(
          `cannot run ssh for host '${host.name}': ${e.message} — install the OpenSSH client (apt-get install openssh-client)`,
          { code: 'ssh-missing', cause: e },
        ),
      ),
    );
    child.on('close', (code) => {
      const stderr = Buffer.concat(err).toString('utf8');
      if (code === SSH_FAILED) return reject(unreachable(host, stderr));
      if (code === NOT_FOUND) {
        return reject(
          new FlotillaError(
            `cannot run flotilla ${args[0] ?? ''} on host '${host.name}': '${host.flotilla}' or Node was not found there (${stderr.trim().split('\n').pop() ?? ''}) — run 'flotilla doctor --host ${host.name}'`,
            { code: 'host-missing-flotilla' },
          ),
        );
      }
      process.stderr.write(stderr);
      resolve(code ?? 1);
    });
    child.stdin.on('error', () => {
      /* the remote command may end before reading it all */
    });
    child.stdin.end(input);
  });
}
