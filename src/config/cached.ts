import { existsSync, mkdirSync, readFileSync, renameSync, statSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { userPaths, type Layout } from '../layout/layout.js';
import { CLI_ENTRY } from '../layout/package.js';
import type { LoadedConfig } from './load.js';
import { byCodeUnit } from '../compare.js';
import { trustFile } from './trust-store.js';

/**
 * The effective config without loading the loader (§14 start-up). Building it means the
 * generated validator, a YAML parser for each file and a walk over every key — most of what a
 * `flotilla status` spent before doing its work, when the validator was zod's schema. The
 * result depends only on the two config files, the `FLOTILLA_*` variables that name config
 * keys, the flags and this build, so it is kept in
 * `state/index/config-cache.json` keyed by exactly those (file identity = inode, size and
 * mtime in ns) and reused while they are unchanged; a few entries side by side, one per set
 * of variables and flags in use. A miss, or any doubt, loads for real.
 * The cache is never the truth: deleting it costs one slow start.
 */

interface FileKey {
  path: string;
  /** `ino:size:mtimeNs`, or null when the file does not exist. */
  id: string | null;
}

interface CacheEntry {
  build: string;
  files: FileKey[];
  /** Every variable that can set a key, with the value it had (absent: unset). */
  env: Record<string, string>;
  envNames: string[];
  flags: string;
  loaded: LoadedConfig;
}

function fileId(path: string): string | null {
  try {
    const st = statSync(path, { bigint: true });
    return `${st.ino}:${st.size}:${st.mtimeNs}`;
  } catch {
    return null;
  }
}

/**
 * This build: a new version (new schema) never reads an old entry. Named by the CLI's entry,
 * which every build rewrites, not by the file this code is in: the fast commands' bundles and
 * the full CLI's chunks each hold a copy of it, and keyed by those they replaced each other's
 * entry, so every `status` after a `send` loaded the config for real.
 */
function buildId(): string {
  return `${CLI_ENTRY}:${fileId(CLI_ENTRY) ?? 'unknown'}`;
}

function filesOf(layout: Layout, env: NodeJS.ProcessEnv): FileKey[] {
  // The trust list decides which of the project file's keys count (docs/security-trust.md "Folder trust").
  return [userPaths(env).configFile, layout.configFile, trustFile(env)].map((path) => ({ path, id: fileId(path) }));
}

/**
 * Up to this many entries are kept, newest first: a fleet's agents run with environments of
 * their own (`FLOTILLA_*` variables that set keys), and with one entry every `send` from an
 * agent and every `status` from a person's shell replaced the other's.
 */
const MAX_ENTRIES = 8;

function entriesIn(layout: Layout): CacheEntry[] {
  try {
    const parsed = JSON.parse(readFileSync(layout.configCache, 'utf8')) as { entries?: unknown };
    return Array.isArray(parsed.entries) ? (parsed.entries as CacheEntry[]) : [];
  } catch {
    return [];
  }
}

/** Made by this build from these files: otherwise it can never match again. */
function current(entry: CacheEntry, build: string, files: FileKey[]): boolean {
  return (
    entry.build === build &&
    Array.isArray(entry.files) &&
    files.length === entry.files.length &&
    files.every((f, i) => f.path === entry.files[i]!.path && f.id === entry.files[i]!.id)
  );
}

function matches(entry: CacheEntry, build: string, files: FileKey[], env: NodeJS.ProcessEnv, flags: string): boolean {
  if (!current(entry, build, files) || entry.flags !== flags || !Array.isArray(entry.envNames)) return false;
  for (const name of entry.envNames) if (env[name] !== entry.env[name]) return false;
  return true;
}

function write(layout: Layout, entry: CacheEntry, env: NodeJS.ProcessEnv): void {
  // This one replaces any for the same inputs, and any that can never match again.
  const kept = entriesIn(layout).filter(
    (e) => current(e, entry.build, entry.files) && !matches(e, entry.build, entry.files, env, entry.flags),
  );
  // No fsync: a cache lost in a crash is rebuilt by the next start.
  const tmp = `${layout.configCache}.${process.pid}.tmp`;
  // A read-only command (status, doctor) run where no fleet is never makes a fleet root for its cache.
  if (!existsSync(layout.state)) return;
  try {
    mkdirSync(dirname(layout.configCache), { recursive: true });
    writeFileSync(tmp, JSON.stringify({ entries: [entry, ...kept].slice(0, MAX_ENTRIES) }));
    renameSync(tmp, layout.configCache);
  } catch {
    // A read-only fleet root (a sandboxed shell) just goes without.
  }
}

/** `loadConfig` with the cache in front; errors (invalid config) are never cached. */
export async function loadConfigCached(
  layout: Layout,
  flags: Record<string, unknown> = {},
  env: NodeJS.ProcessEnv = process.env,
): Promise<LoadedConfig> {
  const flagKey = JSON.stringify(
    Object.entries(flags)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => byCodeUnit(a, b)),
  );
  const build = buildId();
  const files = filesOf(layout, env);
  const hit = entriesIn(layout).find((e) => matches(e, build, files, env, flagKey));
  if (hit) return hit.loaded;
  const { loadConfig, configEnvNames } = await import('./load.js');
  const loaded = await loadConfig({ layout, flags, env });
  const envNames = configEnvNames();
  const values: Record<string, string> = {};
  for (const name of envNames) if (env[name] !== undefined) values[name] = env[name];
  // Keyed by the files as they were *before* reading them: an edit during the load is a miss next time.
  write(layout, { build, files, env: values, envNames, flags: flagKey, loaded }, env);
  return loaded;
}
