import { spawn } from 'node:child_process';
import type { Config } from '../config/schema.js';
import { FlotillaError } from '../errors.js';
import { MAX_SECRET_BYTES, MIN_SECRET_CHARS, secretSource } from './keys.js';

/**
 * Reads a secret's value in the approving person's process (§11): from its environment, or
 * from a configured command's stdout (`pass show github`). The value is returned in a Buffer
 * the caller zeroes after the handoff; it never goes to a file or an argv.
 */
export async function resolveSecretValue(
  key: string,
  config: Pick<Config, 'security'>,
  opts: { env?: NodeJS.ProcessEnv; interactive?: boolean; timeoutMs?: number } = {},
): Promise<Buffer> {
  const env = opts.env ?? process.env;
  const src = secretSource(key, config);
  let value: Buffer;
  if ('env' in src) {
    const text = env[src.env];
    if (text === undefined || text === '') {
      throw new FlotillaError(
        `secret '${key}' has no value here: set ${src.env} in the approving shell, or configure security.secrets.${key}: {command: "…"} — the request stays pending`,
        { code: 'secret-missing' },
      );
    }
    value = Buffer.from(text, 'utf8');
  } else {
    value = await runSourceCommand(key, src.command, env, opts.interactive ?? false, opts.timeoutMs ?? 60_000);
  }
  // A value read from a file or a command usually ends with one newline that is not part of it.
  let end = value.length;
  if (end > 0 && value[end - 1] === 0x0a) end--;
  if (end > 0 && value[end - 1] === 0x0d) end--;
  const trimmed = Buffer.alloc(end);
  value.copy(trimmed, 0, 0, end);
  value.fill(0);
  if (trimmed.toString('utf8').length < MIN_SECRET_CHARS) {
    trimmed.fill(0);
    throw new FlotillaError(
      `secret '${key}' is shorter than ${MIN_SECRET_CHARS} characters: too short to redact from outputs safely — the request stays pending`,
      { code: 'secret-too-short' },
    );
  }
  return trimmed;
}

function runSourceCommand(
  key: string,
  command: string,
  env: NodeJS.ProcessEnv,
  interactive: boolean,
  timeoutMs: number,
): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    // The person's terminal stays the command's stdin/stderr on the CLI, so a passphrase prompt works.
    const child = spawn('/bin/sh', ['-c', command], {
      env,
      stdio: [interactive ? 'inherit' : 'ignore', 'pipe', interactive ? 'inherit' : 'ignore'],
    });
    const out = Buffer.alloc(MAX_SECRET_BYTES + 1);
    let size = 0;
    child.stdout.on('data', (c: Buffer) => {
      const n = Math.min(c.length, out.length - size);
      c.copy(out, size, 0, n);
      size += n;
      c.fill(0);
    });
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.on('error', (err) => {
      clearTimeout(timer);
      out.fill(0);
      reject(
        new FlotillaError(`secret '${key}': cannot run security.secrets.${key}.command: ${err.message}`, {
          code: 'secret-command',
        }),
      );
    });
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      if (code !== 0) {
        out.fill(0);
        return reject(
          new FlotillaError(
            `secret '${key}': security.secrets.${key}.command ${signal ? `was killed (${signal})` : `exited with status ${code}`} — fix the command and approve again; the request stays pending`,
            { code: 'secret-command' },
          ),
        );
      }
      if (size > MAX_SECRET_BYTES) {
        out.fill(0);
        return reject(
          new FlotillaError(`secret '${key}': the command printed more than ${MAX_SECRET_BYTES} bytes`, {
            code: 'secret-command',
          }),
        );
      }
      const value = Buffer.alloc(size);
      out.copy(value, 0, 0, size);
      out.fill(0);
      resolve(value);
    });
  });
}
