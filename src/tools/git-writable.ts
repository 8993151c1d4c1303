import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve, sep } from 'node:path';
import type { SandboxSpec } from './sandbox.js';

/**
 * What of a repository's git dir a sandboxed agent in its own worktree may write, so that it
 * can commit and stash (docs/security.md, "Commits in the sandbox"): the object store, its
 * worktree's private git dir (index, HEAD, logs) and the `flotilla/` branch folder with its
 * reflogs. Inside those, what git reads as instructions stays read-only: the worktree's
 * `commondir`, `gitdir` and `config.worktree`, `objects/info` (alternates), and every other
 * agent's `flotilla/*` branch and reflog. Hooks, config, `info/` and every other branch's refs
 * lie outside the writable parts and stay read-only with the rest of the git dir.
 *
 * `refs/` and `logs/refs/` are stand-ins of the agent's own (in its worktree's git dir), with
 * each of the repository's entries there but `stash` bound back read-only: `refs/stash` is
 * shared by every worktree, so the agent's stash is kept in its stand-in, and the person's
 * stash is neither seen nor changed from inside.
 *
 * An agent working in place (no worktree) gets nothing: the person's checkout keeps its
 * index and HEAD in the git dir itself, beside `config` and `hooks`, and writing them would
 * let the agent move the person's branch (docs/decisions.md, "Agents commit in worktrees").
 */
export interface GitWrites {
  writable: string[];
  readOnly: string[];
  standIns: { from: string; at: string }[];
}

const NONE: GitWrites = { writable: [], readOnly: [], standIns: [] };

/**
 * The git writes for agent `id` whose worktree is `worktree` (null: none). Runs on the host
 * before each sandbox is made: it makes sure every path to be held exists (a missing file
 * cannot be held), and writes other agents' packed `flotilla/` branches out as loose refs so
 * that each is a file held read-only, never one the agent could create over the packed one.
 */
export function gitWrites(worktree: string | null, id: string): GitWrites {
  if (!worktree) return NONE;
  const dirs = worktreeGitDirs(worktree);
  if (!dirs) return NONE;
  const { gitDir, common } = dirs;
  const branches = join(common, 'refs', 'heads', 'flotilla');
  const logs = join(common, 'logs', 'refs', 'heads', 'flotilla');
  const configWorktree = join(gitDir, 'config.worktree');
  const refs = join(common, 'refs');
  const logRefs = join(common, 'logs', 'refs');
  const ownRefs = join(gitDir, 'flotilla-refs');
  const ownLogRefs = join(gitDir, 'flotilla-logs');
  try {
    for (const d of [branches, logs, ownRefs, ownLogRefs]) mkdirSync(d, { recursive: true });
    // Read only when the person turns on extensions.worktreeConfig; held now so it cannot be planted for then.
    if (!existsSync(configWorktree)) writeFileSync(configWorktree, '');
    looseFlotillaRefs(common);
  } catch {
    return NONE;
  }
  // A `.lock` is another agent's git mid-write: gone a moment later, and a held path that is
  // gone when the mounts are made is made on the host as a folder, which would then block
  // that agent's every commit ("cannot lock ref … File exists").
  const others = (dir: string) =>
    listNames(dir)
      .filter((n) => n !== id && !n.endsWith('.lock'))
      .map((n) => join(dir, n));
  // Everything in refs/ and logs/refs/ shows through its stand-in, read-only, but the shared stash.
  const shared = (dir: string) =>
    listNames(dir)
      .filter((n) => n !== 'stash' && !n.endsWith('.lock'))
      .map((n) => join(dir, n));
  return {
    writable: [join(common, 'objects'), gitDir, branches, logs],
    standIns: [
      { from: ownRefs, at: refs },
      { from: ownLogRefs, at: logRefs },
    ],
    readOnly: [
      ...shared(refs),
      ...shared(logRefs),
      join(common, 'objects', 'info'),
      join(gitDir, 'commondir'),
      join(gitDir, 'gitdir'),
      configWorktree,
      ...others(branches),
      ...others(logs),
    ],
  };
}

/**
 * A sandbox spec with the git writes added: the worktree's git dir leaves the read-only list
 * (bind order would otherwise hold it), the rest is appended. The one hook the sandbox's
 * argument builder needs (tools/sandbox.ts).
 */
export function withGitWrites(spec: SandboxSpec, writes: GitWrites): SandboxSpec {
  if (!writes.writable.length) return spec;
  const granted = new Set(writes.writable);
  return {
    ...spec,
    writable: [...spec.writable, ...writes.writable],
    standIns: [...(spec.standIns ?? []), ...writes.standIns],
    readOnly: [...spec.readOnly.filter((p) => !granted.has(p)), ...writes.readOnly],
  };
}

/** The worktree's private git dir and the common dir, when `.git` there is a worktree's pointer file. */
export function worktreeGitDirs(worktree: string): { gitDir: string; common: string } | undefined {
  try {
    const named = /^gitdir:\s*(.+?)\s*$/m.exec(readFileSync(join(worktree, '.git'), 'utf8'))?.[1];
    if (!named) return undefined;
    const gitDir = resolve(worktree, named);
    const common = resolve(gitDir, readFileSync(join(gitDir, 'commondir'), 'utf8').trim());
    // Only a linked worktree's own folder under the common dir's worktrees/.
    if (!gitDir.startsWith(join(common, 'worktrees') + sep)) return undefined;
    return { gitDir, common };
  } catch {
    return undefined;
  }
}

function listNames(dir: string): string[] {
  try {
    return readdirSync(dir);
  } catch {
    return [];
  }
}

/** Writes each packed `refs/heads/flotilla/*` without a loose file as one (same value: git reads the loose first). */
function looseFlotillaRefs(common: string): void {
  let packed: string;
  try {
    packed = readFileSync(join(common, 'packed-refs'), 'utf8');
  } catch {
    return;
  }
  for (const m of packed.matchAll(/^([0-9a-f]{40,64}) refs\/heads\/flotilla\/([A-Za-z0-9_-]+)$/gm)) {
    const loose = join(common, 'refs', 'heads', 'flotilla', m[2]!);
    if (!existsSync(loose)) writeFileSync(loose, `${m[1]}\n`);
  }
}
