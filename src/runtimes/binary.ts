import { execFile } from 'node:child_process';
import { accessSync, constants } from 'node:fs';
import { delimiter, join } from 'node:path';
import type { Runtime } from './types.js';

/** The vendor CLI to run: `$FLOTILLA_<NAME>_BIN`, else the binary on PATH; undefined when missing. */
export function findRuntimeBinary(runtime: Pick<Runtime, 'binary' | 'binEnv'>, env: NodeJS.ProcessEnv = process.env): string | undefined {
  const explicit = env[runtime.binEnv]?.trim();
  if (explicit) return executable(explicit) ? explicit : undefined;
  for (const dir of (env.PATH ?? '').split(delimiter)) {
    if (!dir) continue;
    const p = join(dir, runtime.binary);
    if (executable(p)) return p;
  }
  return undefined;
}

function executable(p: string): boolean {
  try {
    accessSync(p, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/** `<bin> --version`'s first line, or undefined when it does not answer within 10 s. */
export function runtimeVersion(bin: string, env: NodeJS.ProcessEnv = process.env): Promise<string | undefined> {
  return new Promise((resolve) => {
    execFile(bin, ['--version'], { timeout: 10_000, env: { ...env, DISABLE_AUTOUPDATER: '1', NO_UPDATE_NOTIFIER: '1' } }, (err, stdout) => {
      resolve(err ? undefined : stdout.split('\n').find((l) => l.trim())?.trim());
    });
  });
}
