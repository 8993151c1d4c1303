import {
  existsSync,
  lstatSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  statSync,
  unlinkSync,
  writeFileSync,
} from 'node:fs';
import { join, resolve, sep } from 'node:path';
import type { Layout } from '../layout/layout.js';
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
 * An agent working in place (no worktree) commits through a git dir of its own, objects
 * and branch included (`inPlaceGitWrites`): the person's checkout keeps its index and HEAD in
 * the git dir itself, beside `config` and `hooks`, so those are never the agent's, and nothing
 * of the repository is writable (docs/decisions.md, "Agents commit in place through a git dir
 * of their own").
 */
export interface GitWrites {
  writable: string[];
  readOnly: string[];
  standIns: { from: string; at: string; readOnly?: boolean }[];
}

const NONE: GitWrites = { writable: [], readOnly: [], standIns: [] };

/**
 * The git writes for agent `id` whose worktree is `worktree` (null: none). Runs on the host
 * before each sandbox is made: it makes sure every path to be held exists (a missing file
 * cannot be held), and writes other agents' packed `flotilla/` branches out as loose refs so
 * that each is a file held read-only, never one the agent could create over the packed one.
 */
export function gitWrites(
  worktree: string | null,
  id: string,
  inPlace?: { checkout: string; gitDir: string },
): GitWrites {
  if (!worktree) return inPlace ? inPlaceGitWrites(inPlace.checkout, inPlace.gitDir) : NONE;
  const dirs = worktreeGitDirs(worktree);
  if (!dirs) return NONE;
  const { gitDir, common } = dirs;
  const configWorktree = join(gitDir, 'config.worktree');
  const ownRefs = join(gitDir, 'flotilla-refs');
  const ownLogRefs = join(gitDir, 'flotilla-logs');
  try {
    // The stand-ins and the mount points in them are never a link of the agent's (see `inPlaceGitWrites`).
    dropLinks([
      ownRefs,
      ownLogRefs,
      ...sharedNames(join(common, 'refs')).map((n) => join(ownRefs, n)),
      ...sharedNames(join(common, 'logs', 'refs')).map((n) => join(ownLogRefs, n)),
    ]);
    for (const d of [ownRefs, ownLogRefs]) mkdirSync(d, { recursive: true });
    // Read only when the person turns on extensions.worktreeConfig; held now so it cannot be planted for then.
    if (!existsSync(configWorktree)) writeFileSync(configWorktree, '');
  } catch {
    return NONE;
  }
  const refWrites = branchWrites(common, id);
  if (!refWrites) return NONE;
  return {
    writable: [gitDir, ...refWrites.writable],
    standIns: [
      { from: ownRefs, at: join(common, 'refs') },
      { from: ownLogRefs, at: join(common, 'logs', 'refs') },
    ],
    readOnly: [...refWrites.readOnly, join(gitDir, 'commondir'), join(gitDir, 'gitdir'), configWorktree],
  };
}

/**
 * The writes of an agent working in place in `checkout`, whose `.git` is the repository's own
 * folder: its own git dir `gitDir` (HEAD on `flotilla/<id>`, its index, refs, reflogs, stash
 * and objects; made at spawn, `work/in-place.ts`) stands in for `.git`. Bound back read-only
 * into it: every entry of the repository's git dir but those a checkout keeps for itself
 * (config, hooks, info/, packed-refs, worktrees/, …), every ref folder and branch but
 * `refs/heads/flotilla/`, and the repository's objects at `REPO_OBJECTS`, which its own
 * `objects/info/alternates` names (held read-only too). Nothing of the repository is
 * writable: its commits land in its own objects and branch, and the host imports them before
 * its git reads `flotilla/<id>` (work/import-branch.ts).
 */
export function inPlaceGitWrites(checkout: string, gitDir: string): GitWrites {
  const common = join(checkout, '.git');
  const heldNames = listNames(common).filter((n) => !OWN_ENTRIES.has(n) && !PER_CHECKOUT.test(n));
  const refNames = sharedNames(join(common, 'refs')).filter((n) => n !== 'heads');
  const branchNames = sharedNames(join(common, 'refs', 'heads')).filter((n) => n !== 'flotilla');
  const info = join(gitDir, 'objects', 'info');
  try {
    if (!statSync(common).isDirectory() || !existsSync(join(gitDir, 'HEAD'))) return NONE;
    // Where the mounts land in its git dir, and what the host writes there, never a link of
    // the agent's: bwrap would follow it and make a missing mount point wherever it leads.
    dropLinks([
      ...['refs', join('refs', 'heads'), join('refs', 'heads', 'flotilla'), 'objects', REPO_OBJECTS].map((n) =>
        join(gitDir, n),
      ),
      info,
      join(info, 'alternates'),
      ...heldNames.map((n) => join(gitDir, n)),
      ...refNames.map((n) => join(gitDir, 'refs', n)),
      ...branchNames.map((n) => join(gitDir, 'refs', 'heads', n)),
    ]);
    for (const d of [join(gitDir, 'refs', 'heads', 'flotilla'), info, join(gitDir, REPO_OBJECTS)])
      mkdirSync(d, { recursive: true });
    writeFileSync(join(info, 'alternates'), `../${REPO_OBJECTS}\n`);
    dropStaleBranches(join(gitDir, 'refs', 'heads'), new Set([...branchNames, 'flotilla']));
  } catch {
    return NONE;
  }
  return {
    writable: [],
    standIns: [
      { from: gitDir, at: common },
      { from: info, at: join(common, 'objects', 'info'), readOnly: true },
      { from: join(common, 'objects'), at: join(common, REPO_OBJECTS), readOnly: true },
    ],
    readOnly: [
      ...heldNames.map((n) => join(common, n)),
      ...refNames.map((n) => join(common, 'refs', n)),
      ...branchNames.map((n) => join(common, 'refs', 'heads', n)),
    ],
  };
}

/** Where an in-place agent's git dir shows the repository's objects, read-only (its alternate). */
export const REPO_OBJECTS = 'repository-objects';

/** The file an in-place agent's branch `flotilla/<id>` is kept in, in its own git dir. */
export const ownBranchFile = (gitDir: string, id: string): string => join(gitDir, 'refs', 'heads', 'flotilla', id);

/**
 * The empty files a branch of the person's left in the agent's `refs/heads/` as its mount
 * point, once that branch is gone: git would read each as a broken ref. A branch the agent
 * made there itself holds an id and stays.
 */
function dropStaleBranches(dir: string, bound: ReadonlySet<string>): void {
  for (const n of listNames(dir)) {
    if (bound.has(n)) continue;
    try {
      const st = lstatSync(join(dir, n));
      if (st.isFile() && st.size === 0) unlinkSync(join(dir, n));
    } catch {
      /* gone meanwhile */
    }
  }
}

/** Where an agent made to work in place with a branch (its record has a base and no worktree) commits from. */
export function inPlaceOf(
  layout: Layout,
  rec: { id: string; worktree: string | null; base?: unknown },
): { checkout: string; gitDir: string } | undefined {
  return !rec.worktree && rec.base ? { checkout: layout.project, gitDir: layout.inPlaceGitDir(rec.id) } : undefined;
}

/** What a git dir holds for its own checkout, which the agent's own git dir has instead of the person's. */
const OWN_ENTRIES = new Set(['HEAD', 'index', 'logs', 'refs', 'objects', 'sequencer', 'rebase-merge', 'rebase-apply']);
// ORIG_HEAD, MERGE_HEAD, COMMIT_EDITMSG, …; a `.lock` (the person's git mid-write); a split index's parts.
const PER_CHECKOUT = /^[A-Z_]+$|\.lock$|^sharedindex\.|^fsmonitor--daemon/;

/**
 * What a commit, its own branch and a stash need in the common dir, for a worktree: the objects and the `flotilla/`
 * branch folder with its reflogs writable, and held
 * inside them `objects/info` (alternates) and every other agent's branch and reflog. `refs/`
 * and `logs/refs/` are stand-ins of the agent's own; every entry of the repository's there
 * but `stash` is bound back read-only. Undefined where the folders cannot be made.
 */
function branchWrites(common: string, id: string): { writable: string[]; readOnly: string[] } | undefined {
  const branches = join(common, 'refs', 'heads', 'flotilla');
  const logs = join(common, 'logs', 'refs', 'heads', 'flotilla');
  try {
    for (const d of [branches, logs]) mkdirSync(d, { recursive: true });
    looseFlotillaRefs(common);
  } catch {
    return undefined;
  }
  // A `.lock` is another agent's git mid-write: gone a moment later, and a held path that is
  // gone when the mounts are made is made on the host as a folder, which would then block
  // that agent's every commit ("cannot lock ref … File exists").
  const others = (dir: string) =>
    listNames(dir)
      .filter((n) => n !== id && !n.endsWith('.lock'))
      .map((n) => join(dir, n));
  const shared = (dir: string) => sharedNames(dir).map((n) => join(dir, n));
  return {
    writable: [join(common, 'objects'), branches, logs],
    readOnly: [
      ...shared(join(common, 'refs')),
      ...shared(join(common, 'logs', 'refs')),
      join(common, 'objects', 'info'),
      ...others(branches),
      ...others(logs),
    ],
  };
}

/**
 * A sandbox spec with the git writes added: the worktree's git dir (in place: the checkout's
 * `.git`, which the agent's own stands in for) leaves the read-only list
 * (bind order would otherwise hold it), the rest is appended. The one hook the sandbox's
 * argument builder needs (tools/sandbox.ts).
 */
export function withGitWrites(spec: SandboxSpec, writes: GitWrites): SandboxSpec {
  if (!writes.writable.length && !writes.standIns.length) return spec;
  const granted = new Set([...writes.writable, ...writes.standIns.map((s) => s.at)]);
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

/** Everything in refs/ and logs/refs/ shows through the agent's stand-in, read-only, but the shared stash. */
function sharedNames(dir: string): string[] {
  return listNames(dir).filter((n) => n !== 'stash' && !n.endsWith('.lock'));
}

/** Removes each path that is a symbolic link (parents first: a removed link's children are gone with it). */
function dropLinks(paths: readonly string[]): void {
  for (const p of paths) {
    try {
      if (lstatSync(p).isSymbolicLink()) unlinkSync(p);
    } catch {
      /* missing: nothing to drop */
    }
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
