import { execFile } from 'node:child_process';
import { accessSync, constants } from 'node:fs';
import { basename, delimiter, dirname, join } from 'node:path';
import { PACKAGE_ROOT } from '../layout/package.js';
import type { Runtime } from './types.js';

/** Where a vendor CLI was found, in the order it is looked for (docs/runtimes.md, "Which CLI runs"). */
export type BinarySource = 'env' | 'config' | 'PATH' | 'project' | 'beside Flotilla';

export interface FoundBinary {
  path: string;
  via: BinarySource;
}

export interface LookupPlaces {
  /** `runtimes.<name>.command` from the config. */
  command?: string | null | undefined;
  /** The project folder: its node_modules/.bin is searched after PATH. */
  project?: string | undefined;
}

/**
 * The vendor CLI to run: `$FLOTILLA_<NAME>_BIN`, then `runtimes.<name>.command`, then PATH,
 * then the project's node_modules/.bin (a devDependency, as `npx` would find it), then the
 * CLIs installed beside Flotilla (its own node_modules/.bin, the node_modules/.bin it is
 * installed into, the bin folder of the Node that runs it, where `npm install -g` puts them).
 * An explicit path that is not executable is not silently replaced by another.
 */
export function locateRuntimeBinary(runtime: Pick<Runtime, 'binary' | 'binEnv'>, env: NodeJS.ProcessEnv = process.env, places: LookupPlaces = {}): FoundBinary | undefined {
  const explicit = env[runtime.binEnv]?.trim();
  if (explicit) return executable(explicit) ? { path: explicit, via: 'env' } : undefined;
  const configured = places.command?.trim();
  if (configured) return executable(configured) ? { path: configured, via: 'config' } : undefined;
  const inDirs = (dirs: string[], via: BinarySource): FoundBinary | undefined => {
    for (const dir of dirs) {
      if (!dir) continue;
      const p = join(dir, runtime.binary);
      if (executable(p)) return { path: p, via };
    }
    return undefined;
  };
  return inDirs((env.PATH ?? '').split(delimiter), 'PATH')
    ?? (places.project ? inDirs([join(places.project, 'node_modules', '.bin')], 'project') : undefined)
    ?? inDirs(besideFlotilla(), 'beside Flotilla');
}

/** The path of the CLI to run, or undefined when it is not installed anywhere we look. */
export function findRuntimeBinary(runtime: Pick<Runtime, 'binary' | 'binEnv'>, env: NodeJS.ProcessEnv = process.env, places: LookupPlaces = {}): string | undefined {
  return locateRuntimeBinary(runtime, env, places)?.path;
}

function besideFlotilla(): string[] {
  const root = PACKAGE_ROOT.replace(/\/+$/, '');
  const dirs = [join(root, 'node_modules', '.bin')];
  // Installed as a dependency: …/node_modules/flotilla (or …/node_modules/@scope/flotilla).
  const parent = dirname(root);
  if (basename(parent) === 'node_modules') dirs.push(join(parent, '.bin'));
  else if (basename(dirname(parent)) === 'node_modules') dirs.push(join(dirname(parent), '.bin'));
  dirs.push(dirname(process.execPath));
  return dirs;
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
