import { spawn } from 'node:child_process';
import {
  closeSync,
  constants,
  copyFileSync,
  fstatSync,
  linkSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  readdirSync,
  readSync,
  realpathSync,
  rmSync,
  unlinkSync,
} from 'node:fs';
import { dirname, join } from 'node:path';
import type { Layout } from '../layout/layout.js';
import { ownBranchFile } from '../tools/git-writable.js';
import { alternateObjects, git, gitWhy, SAFE_GIT, type GitResult } from './git.js';

/**
 * Brings in-place agents' commits into the repository (docs/security.md, "Commits in the
 * sandbox"): an agent working in place writes its objects into a folder of its own and moves
 * its branch in its own git dir, so the host copies them in before any of its git reads
 * `flotilla/<id>` (`review`, `diff`, `merge`, `gc`, and at the end of each task); `status`
 * only counts them, reading them where they are staged (`stagedObjects`, standing.ts).
 *
 * Nothing the agent wrote is run or taken as git's instructions: no git runs with the agent's
 * git dir, config or hooks. Its branch tip is read as text (not through a link) and must be a
 * hex id; of its objects folder only loose objects and `pack-*.pack`/`.idx` files are taken,
 * each a plain file (links, pipes and the agent's own `info/alternates` are left out), into a
 * folder of the host's; the person's repository then reads them there as an alternate
 * (`GIT_ALTERNATE_OBJECT_DIRECTORIES`), packs what the tip reaches and its refs do not, and
 * `git index-pack --strict` writes that pack in, checking every object and that each it
 * points at is there. Only then does `flotilla/<id>` move, and only from the tip it had.
 *
 * Returns a line per agent whose commits could not be brought in (the repository's branch
 * stays as it was); an agent with nothing new costs no git process but one ref read for all.
 */
export async function importInPlaceBranches(
  layout: Layout,
  agents: readonly { id: string; branch: string }[],
): Promise<Map<string, string>> {
  const problems = new Map<string, string>();
  const tips = agents.flatMap(({ id, branch }) => {
    const tip = readTip(layout.inPlaceGitDir(id), id);
    return tip ? [{ id, branch, tip }] : [];
  });
  if (tips.length === 0) return problems;
  const refs = await git(layout.project, ['for-each-ref', '--format=%(objectname) %(refname)', 'refs/heads/flotilla/']);
  const now = new Map(
    refs.stdout
      .split('\n')
      .filter(Boolean)
      .map((l) => [l.slice(l.indexOf(' ') + 1), l.slice(0, l.indexOf(' '))] as const),
  );
  for (const { id, branch, tip } of tips) {
    const was = now.get(`refs/heads/${branch}`);
    // Gone (gc removed it, or the person deleted it): not made again.
    if (!was || was === tip) continue;
    const why = await importOne(layout, id, branch, tip, was);
    if (why) problems.set(id, `${branch}: ${why}`);
  }
  return problems;
}

async function importOne(layout: Layout, id: string, branch: string, tip: string, was: string): Promise<string | null> {
  const staged = stagedObjects(layout, id);
  try {
    const reading = { ...process.env, ...alternateObjects([staged.objects]) };
    const list = await git(layout.project, ['rev-list', '--objects', tip, '--not', '--all'], reading);
    if (list.code !== 0) return `its commit ${tip.slice(0, 12)} is not whole (${gitWhy(list)})`;
    if (list.stdout.trim()) {
      const packed = await packInto(layout.project, list.stdout, reading);
      if (packed.code !== 0) return `its objects did not pass git index-pack (${gitWhy(packed)})`;
    }
    const ref = `refs/heads/${branch}`;
    const moved = await git(layout.project, ['update-ref', '-m', `flotilla: ${id}'s commits`, ref, tip, was]);
    return moved.code === 0 ? null : gitWhy(moved);
  } finally {
    staged.drop();
  }
}

/**
 * The agent's objects staged into a folder of the host's (`stageObjects`), for the host's git
 * to read as an alternate (`GIT_ALTERNATE_OBJECT_DIRECTORIES`) without ever reading the agent's
 * own folder; `drop` removes the folder. The import reads through it, and so does `status`
 * (standing.ts), which counts an agent's new commits without bringing them in.
 */
export function stagedObjects(layout: Layout, id: string): { objects: string; drop(): void } {
  const own = layout.inPlaceGitDir(id);
  const staging = mkdtempSync(join(dirname(own), `.import-${id}-`));
  const objects = join(staging, 'objects');
  stageObjects(join(own, 'objects'), objects, own);
  return { objects, drop: () => rmSync(staging, { recursive: true, force: true }) };
}

/**
 * `git pack-objects --stdout` of `list` (reading through the staged alternate) into
 * `git index-pack --stdin --strict` of the repository alone: the objects land only once
 * checked, and only when every object they point at is in the pack or the repository.
 */
function packInto(project: string, list: string, reading: NodeJS.ProcessEnv): Promise<GitResult> {
  const run = (args: string[], env: NodeJS.ProcessEnv) =>
    spawn('git', [...SAFE_GIT, '-C', project, ...args], { env, stdio: ['pipe', 'pipe', 'pipe'] });
  const pack = run(['pack-objects', '--stdout', '-q'], reading);
  const index = run(['index-pack', '--stdin', '--strict'], process.env);
  const ended = (child: ReturnType<typeof run>) =>
    new Promise<GitResult>((done) => {
      let stderr = '';
      child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
      child.on('error', (err) => done({ code: 1, stdout: '', stderr: err.message }));
      child.on('close', (code) => done({ code: code ?? 1, stdout: '', stderr }));
    });
  const results = Promise.all([ended(pack), ended(index)]);
  for (const s of [pack.stdin, index.stdin, pack.stdout]) s.on('error', () => undefined);
  index.stdout.resume();
  pack.stdout.pipe(index.stdin);
  pack.stdin.end(list);
  return results.then(([p, i]) => (p.code !== 0 ? p : i));
}

/**
 * The agent's branch tip in its own git dir, or null: a plain file (never followed through a
 * link, its folder the git dir's own) holding one hex id and nothing else.
 */
export function readTip(gitDir: string, id: string): string | null {
  const file = ownBranchFile(gitDir, id);
  try {
    if (realpathSync(dirname(file)) !== join(realpathSync(gitDir), dirname(ownBranchFile('', id)))) return null;
  } catch {
    return null;
  }
  let fd: number;
  try {
    fd = openSync(file, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  } catch {
    return null;
  }
  try {
    if (!fstatSync(fd).isFile()) return null;
    const buf = Buffer.alloc(80);
    const n = readSync(fd, buf, 0, buf.length, 0);
    return /^([0-9a-f]{40}|[0-9a-f]{64})\n?$/.exec(buf.toString('latin1', 0, n))?.[1] ?? null;
  } finally {
    closeSync(fd);
  }
}

const LOOSE_DIR = /^[0-9a-f]{2}$/;
const LOOSE = /^[0-9a-f]{38}$|^[0-9a-f]{62}$/;
const PACK = /^pack-(?:[0-9a-f]{40}|[0-9a-f]{64})\.(?:pack|idx)$/;

/**
 * The agent's loose objects and packs, each linked (or copied) into `to` when it is a plain
 * file: checked on the link made, so a file swapped for a link meanwhile is dropped. Its
 * `info/` (alternates, commit-graph) and anything else is left out.
 */
function stageObjects(from: string, to: string, gitDir: string): void {
  mkdirSync(join(to, 'pack'), { recursive: true });
  try {
    if (realpathSync(from) !== join(realpathSync(gitDir), 'objects')) return;
  } catch {
    return;
  }
  for (const dir of names(from)) {
    const sub = dir === 'pack' ? PACK : LOOSE_DIR.test(dir) ? LOOSE : null;
    if (!sub || !isPlainDir(join(from, dir))) continue;
    mkdirSync(join(to, dir), { recursive: true });
    for (const name of names(join(from, dir)))
      if (sub.test(name)) stageFile(join(from, dir, name), join(to, dir, name));
  }
}

function stageFile(from: string, to: string): void {
  try {
    linkSync(from, to);
  } catch {
    copyPlain(from, to);
    return;
  }
  // link(2) links a link itself, never where it leads: what was linked is checked, not the name.
  if (!lstatSync(to).isFile()) unlinkSync(to);
}

/** A copy of `from` when it is a plain file (across file systems, where no link can be made). */
function copyPlain(from: string, to: string): void {
  let fd: number;
  try {
    fd = openSync(from, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  } catch {
    return;
  }
  try {
    if (fstatSync(fd).isFile()) copyFileSync(`/proc/self/fd/${fd}`, to);
  } catch {
    /* unreadable: left out, and the import says what is missing */
  } finally {
    closeSync(fd);
  }
}

function isPlainDir(path: string): boolean {
  try {
    return lstatSync(path).isDirectory();
  } catch {
    return false;
  }
}

function names(dir: string): string[] {
  try {
    return readdirSync(dir);
  } catch {
    return [];
  }
}
