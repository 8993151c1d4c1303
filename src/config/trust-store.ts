import { createHash } from 'node:crypto';
import { readdirSync, readFileSync, realpathSync, statSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { writeFileAtomic } from '../layout/atomic.js';
import { userPaths, type Layout } from '../layout/layout.js';

/**
 * Folder trust (docs/security-trust.md "Folder trust"): a project's own files — the fleet root's
 * `config.yaml` and `agents/`, and the project's `.claude/agents/` — are someone else's
 * until the person says otherwise with `flotilla trust`. The list of trusted folders lives in
 * the user's config directory (`$XDG_CONFIG_HOME/flotilla/trusted-folders.json`), which a
 * sandboxed agent sees read-only and which no project file can name.
 *
 * Trust is by folder, not by content: a change of those files after trust is reported by
 * `flotilla doctor` and does not ask again (docs/decisions.md, "Folder trust is by folder").
 */

export type TrustLayout = Pick<Layout, 'root' | 'project' | 'configFile' | 'agentsDir'>;

export interface TrustedFolder {
  project: string;
  /** The fleet root whose files were trusted (normally `<project>/.flotilla`). */
  root: string;
  /** sha256 of the project's files when they were trusted (see `projectFilesHash`). */
  hash: string;
  /** Each covered file (relative to the project) → its sha256, so a change can be named. */
  files?: Record<string, string>;
  trustedAt: string;
}

interface TrustFile {
  version: 1;
  folders: TrustedFolder[];
}

export function trustFile(env: NodeJS.ProcessEnv = process.env): string {
  return join(userPaths(env).configDir, 'trusted-folders.json');
}

/** A path as the store keys it: resolved through symlinks when it exists. */
function canonical(path: string): string {
  try {
    return realpathSync(path);
  } catch {
    return resolve(path);
  }
}

export function readTrustedFolders(env: NodeJS.ProcessEnv = process.env): TrustedFolder[] {
  try {
    const parsed = JSON.parse(readFileSync(trustFile(env), 'utf8')) as Partial<TrustFile>;
    if (!Array.isArray(parsed.folders)) return [];
    return parsed.folders.filter(
      (f): f is TrustedFolder =>
        typeof f === 'object' &&
        f !== null &&
        typeof f.project === 'string' &&
        typeof f.root === 'string' &&
        typeof f.hash === 'string',
    );
  } catch {
    // Missing or unreadable: nothing is trusted, which is the safe reading.
    return [];
  }
}

function writeTrustedFolders(folders: TrustedFolder[], env: NodeJS.ProcessEnv): void {
  writeFileAtomic(trustFile(env), JSON.stringify({ version: 1, folders } satisfies TrustFile, null, 2) + '\n');
}

function entryFor(layout: TrustLayout, folders: TrustedFolder[]): TrustedFolder | undefined {
  const project = canonical(layout.project);
  const root = canonical(layout.root);
  return folders.find((f) => f.project === project && f.root === root);
}

/** Whether the person trusted this fleet's project folder. */
export function isTrusted(layout: TrustLayout, env: NodeJS.ProcessEnv = process.env): boolean {
  return entryFor(layout, readTrustedFolders(env)) !== undefined;
}

export function trustedEntry(layout: TrustLayout, env: NodeJS.ProcessEnv = process.env): TrustedFolder | undefined {
  return entryFor(layout, readTrustedFolders(env));
}

/** Records the folder as trusted with the hash of its files now; returns the entry. */
export function trustFolder(
  layout: TrustLayout,
  env: NodeJS.ProcessEnv = process.env,
  now = new Date(),
): TrustedFolder {
  const project = canonical(layout.project);
  const root = canonical(layout.root);
  const entry: TrustedFolder = {
    project,
    root,
    hash: projectFilesHash(layout),
    files: fileHashes(layout),
    trustedAt: now.toISOString(),
  };
  const rest = readTrustedFolders(env).filter((f) => !(f.project === project && f.root === root));
  writeTrustedFolders([...rest, entry], env);
  return entry;
}

/** Forgets the folder; false when it was not trusted. */
export function revokeFolder(layout: TrustLayout, env: NodeJS.ProcessEnv = process.env): boolean {
  const folders = readTrustedFolders(env);
  const entry = entryFor(layout, folders);
  if (!entry) return false;
  writeTrustedFolders(
    folders.filter((f) => f !== entry),
    env,
  );
  return true;
}

/** The project's own files that trust covers, in a fixed order; absent ones are left out. */
export function projectFiles(layout: TrustLayout): string[] {
  const mdIn = (dir: string): string[] => {
    try {
      return readdirSync(dir)
        .filter((n) => n.endsWith('.md'))
        .sort()
        .map((n) => join(dir, n));
    } catch {
      return [];
    }
  };
  const files = [layout.configFile, ...mdIn(layout.agentsDir), ...mdIn(join(layout.project, '.claude', 'agents'))];
  return files.filter((f) => {
    try {
      return statSync(f).isFile();
    } catch {
      return false;
    }
  });
}

/** Each covered file, relative to the project, → the sha256 of its bytes. */
export function fileHashes(layout: TrustLayout): Record<string, string> {
  const out: Record<string, string> = {};
  for (const file of projectFiles(layout)) {
    try {
      out[relative(layout.project, file)] = createHash('sha256').update(readFileSync(file)).digest('hex');
    } catch {
      // Gone since it was listed.
    }
  }
  return out;
}

/** sha256 over each covered file's path (relative to the project) and bytes. */
export function projectFilesHash(layout: TrustLayout): string {
  const hash = createHash('sha256');
  for (const [rel, digest] of Object.entries(fileHashes(layout)))
    hash.update(rel).update('\0').update(digest).update('\0');
  return hash.digest('hex');
}

/** Files added, changed or removed since the folder was trusted (all of them when the entry has no per-file list). */
export function changedSince(layout: TrustLayout, entry: TrustedFolder): string[] {
  const now = fileHashes(layout);
  const then = entry.files ?? {};
  const names = [...new Set([...Object.keys(now), ...Object.keys(then)])].sort();
  return names
    .filter((n) => now[n] !== then[n])
    .map((n) => (then[n] === undefined ? `${n} (new)` : now[n] === undefined ? `${n} (removed)` : n));
}
