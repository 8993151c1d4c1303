import { execFile } from 'node:child_process';
import { accessSync, constants, mkdtempSync, readFileSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, delimiter, dirname, join, resolve, sep } from 'node:path';
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
  /**
   * Whether the person trusts the project (docs/security-trust.md "Folder trust"). Until then no
   * program inside it is run: not its node_modules/.bin, not a PATH entry inside it, not a
   * link that points into it. Default false.
   */
  projectTrusted?: boolean | undefined;
}

/** What the lookup found, and the programs inside an untrusted project it passed over. */
export interface BinaryLookup {
  found: FoundBinary | undefined;
  /** Executables the lookup would have run had the project been trusted, in lookup order. */
  skipped: string[];
}

/**
 * The vendor CLI to run: `$FLOTILLA_<NAME>_BIN`, then `runtimes.<name>.command`, then PATH,
 * then the project's node_modules/.bin (a devDependency, as `npx` would find it; only once the
 * project is trusted, as every place inside it), then the
 * CLIs installed beside Flotilla (its own node_modules/.bin, the node_modules/.bin it is
 * installed into, the bin folder of the Node that runs it, where `npm install -g` puts them).
 * An explicit path that is not executable is not silently replaced by another.
 */
export function locateRuntimeBinary(
  runtime: Pick<Runtime, 'binary' | 'binEnv'>,
  env: NodeJS.ProcessEnv = process.env,
  places: LookupPlaces = {},
): FoundBinary | undefined {
  return lookupRuntimeBinary(runtime, env, places).found;
}

/**
 * `locateRuntimeBinary`, saying also what it skipped inside an untrusted project. The
 * variable and `runtimes.<name>.command` are the person's own choice (an untrusted project's
 * config cannot set the command; config/trust-filter.ts) and are taken as given.
 */
export function lookupRuntimeBinary(
  runtime: Pick<Runtime, 'binary' | 'binEnv'>,
  env: NodeJS.ProcessEnv = process.env,
  places: LookupPlaces = {},
): BinaryLookup {
  const skipped: string[] = [];
  const explicit = env[runtime.binEnv]?.trim();
  if (explicit) return { found: executable(explicit) ? { path: explicit, via: 'env' } : undefined, skipped };
  const configured = places.command?.trim();
  if (configured) return { found: executable(configured) ? { path: configured, via: 'config' } : undefined, skipped };
  const fenced = places.project && !places.projectTrusted ? places.project : undefined;
  const inDirs = (dirs: string[], via: BinarySource): FoundBinary | undefined => {
    for (const dir of dirs) {
      if (!dir) continue;
      const p = join(dir, runtime.binary);
      if (!executable(p)) continue;
      if (fenced && inside(p, fenced)) {
        if (!skipped.includes(p)) skipped.push(p);
        continue;
      }
      return { path: p, via };
    }
    return undefined;
  };
  const found =
    inDirs((env.PATH ?? '').split(delimiter), 'PATH') ??
    (places.project ? inDirs([join(places.project, 'node_modules', '.bin')], 'project') : undefined) ??
    inDirs(besideFlotilla(), 'beside Flotilla');
  return { found, skipped };
}

/** Whether `p` (as written, or after its links) is inside `folder`. */
function inside(p: string, folder: string): boolean {
  const within = (a: string, b: string) => a === b || a.startsWith(b.endsWith(sep) ? b : b + sep);
  if (within(resolve(p), resolve(folder))) return true;
  try {
    return within(realpathSync(p), realpathSync(folder));
  } catch {
    return false;
  }
}

/** The path of the CLI to run, or undefined when it is not installed anywhere we look. */
export function findRuntimeBinary(
  runtime: Pick<Runtime, 'binary' | 'binEnv'>,
  env: NodeJS.ProcessEnv = process.env,
  places: LookupPlaces = {},
): string | undefined {
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

/**
 * `<bin> --version`'s first line, or undefined when it does not answer within 10 s. The CLI's
 * own folders (Claude's config, `~/.codex`, `~/.gemini`) are a throwaway one, removed after:
 * Codex makes `tmp/` there and Gemini its whole folder even to print a version, and doctor (or a
 * spawn) must not write the person's home. HOME itself stays: a version manager's shim (Volta,
 * asdf, mise) finds its own install through it.
 */
export function runtimeVersion(bin: string, env: NodeJS.ProcessEnv = process.env): Promise<string | undefined> {
  let home: string;
  try {
    home = mkdtempSync(join(tmpdir(), 'flotilla-version-'));
  } catch {
    return Promise.resolve(undefined); // no temporary folder: the version is unknown, as when it does not answer
  }
  const own: NodeJS.ProcessEnv = {
    ...env,
    CLAUDE_CONFIG_DIR: home,
    CODEX_HOME: home,
    GEMINI_CLI_HOME: home,
    DISABLE_AUTOUPDATER: '1',
    NO_UPDATE_NOTIFIER: '1',
  };
  return new Promise((resolve) => {
    execFile(bin, ['--version'], { timeout: 10_000, env: own }, (err, stdout) => {
      rmSync(home, { recursive: true, force: true });
      resolve(
        err
          ? undefined
          : stdout
              .split('\n')
              .find((l) => l.trim())
              ?.trim(),
      );
    });
  });
}

/**
 * The version npm installed `bin` with, from the nearest package.json at or above the binary
 * (after links, at most two folders up) when that package is `npmPackage` or its platform
 * package (`@anthropic-ai/claude-code-linux-x64`); undefined for a CLI installed any other way.
 * Reading it costs a file; asking `--version` starts the CLI (Gemini's: ~1 s, loaded more).
 */
export function packagedVersion(bin: string, npmPackage: string): string | undefined {
  let dir: string;
  try {
    dir = dirname(realpathSync(bin));
  } catch {
    return undefined;
  }
  for (let up = 0; up < 3; up++, dir = dirname(dir)) {
    let text: string;
    try {
      text = readFileSync(join(dir, 'package.json'), 'utf8');
    } catch {
      continue;
    }
    try {
      const pkg = JSON.parse(text) as { name?: unknown; version?: unknown };
      const ours = typeof pkg.name === 'string' && (pkg.name === npmPackage || pkg.name.startsWith(`${npmPackage}-`));
      return ours && typeof pkg.version === 'string' ? pkg.version : undefined;
    } catch {
      return undefined;
    }
  }
  return undefined;
}
