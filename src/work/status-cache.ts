import { execFile } from 'node:child_process';
import { createHash, type Hash } from 'node:crypto';
import { lstatSync, mkdirSync, readFileSync, renameSync, writeFileSync, type Stats } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, isAbsolute, join } from 'node:path';
import { gitEach, type GitResult } from './git.js';

/**
 * How many files of each worktree `git status` lists (`review`'s uncommitted count), with a
 * worktree that has not changed since the last count answered from a cache instead of a git
 * process (docs/benchmarks-work.md, "Review of 50 worktree agents"). The cache is keyed by what
 * `git status` reads: HEAD and its branch, the index, the config and exclude files, and every
 * file and folder of the worktree (identity: inode, size, mode, mtime and ctime, so any write,
 * even one that restores the mtime, changes it). A worktree with anything written in the last
 * the settle window (`settleOf`), a submodule or nested repository, or more than `MAX_ENTRIES`
 * entries is not cached: git runs, as it does on any doubt. One file per worktree in `cacheDir`,
 * so reviews run together never undo each other's entries. The cache is never the truth: deleting it costs one review
 * that runs git in every worktree. A worktree sure to miss (no entry, or an index other than the
 * one its count was kept with) has its `git status` started before the walk, beside it.
 * `settleMs`: one window for every file (tests).
 */
export async function uncommittedCounts(
  worktrees: readonly string[],
  args: readonly string[],
  shells: number,
  cacheDir: string,
  settleMs?: number,
): Promise<number[]> {
  // Without optional locks git never rewrites the index it read (a stat refresh), which
  // would make the key just taken stale and keep a worktree out of the cache.
  const status = (ks: readonly number[]) =>
    gitEach(
      ks.map((k) => worktrees[k]!),
      ['--no-optional-locks', ...args],
      shells,
    );
  // The walk's window is counted from here, before any `git status` starts: whatever is written
  // once one has started is recent to the walk, so no count is kept under a key it does not fit.
  const now = Date.now();
  const entries = worktrees.map((w) => readEntry(cacheDir, w));
  // A worktree with no entry, or whose index is not the one its count was kept with (an agent
  // committed), misses for sure: its `git status` runs beside the walk, not after it.
  const sure = worktrees.flatMap((w, k) => {
    const e = entries[k];
    return !e || (e.indexId !== undefined && e.indexId !== indexIdOf(w)) ? [k] : [];
  });
  const early = status(sure);
  const keys = await worktreeKeys(worktrees, settleMs, now);
  const hit = worktrees.map((w, k) => {
    const c = keys[k] ? entries[k] : null;
    return keys[k] && c && c.key === keys[k]!.key ? c.count : null;
  });
  const started = new Set(sure);
  const late = worktrees.flatMap((w, k) => (hit[k] === null && !started.has(k) ? [k] : []));
  const [first, then] = await Promise.all([early, status(late)]);
  const counts = hit.slice();
  const take = (k: number, r: GitResult) => {
    if (hit[k] !== null) return;
    counts[k] = r.code === 0 ? statusCount(r.stdout) : 0;
    const key = keys[k];
    // Someone changed the index meanwhile: the key is stale.
    if (r.code === 0 && key && fileId(key.index) === key.indexId)
      writeEntry(cacheDir, worktrees[k]!, { key: key.key, count: counts[k]!, indexId: key.indexId! });
  };
  sure.forEach((k, n) => take(k, first[n]!));
  late.forEach((k, n) => take(k, then[n]!));
  return counts as number[];
}

/** The identity of a linked worktree's index now (the key's `indexId`), or null. */
function indexIdOf(worktree: string): string | null {
  try {
    const pointer = readFileSync(join(worktree, '.git'), 'utf8');
    if (!pointer.startsWith('gitdir: ')) return null;
    return fileId(join(absolute(worktree, pointer.slice('gitdir: '.length).trim()), 'index'));
  } catch {
    return null;
  }
}

/** The files `git status --porcelain` lists. */
export const statusCount = (out: string) => out.split('\n').filter(Boolean).length;

/**
 * Anything written more recently than this may change again within one timestamp tick, and
 * keep its identity: a filesystem that keeps whole seconds (or a file whose times have no
 * fraction, which is how such a filesystem shows) gets 2 s.
 */
const SETTLE_MS = 2000;
/**
 * The same where timestamps keep fractions (ext4, xfs, btrfs, tmpfs): Linux stamps a write
 * with its coarse clock, one tick (1–10 ms) behind at most, so a write after the key is taken
 * gets a later stamp than any entry older than this.
 */
const FINE_SETTLE_MS = 100;

/** Whether a file's times keep fractions of a second (its filesystem stamps finer than seconds). */
const subSecond = (s: Stats) => s.mtimeMs % 1000 !== 0 || s.ctimeMs % 1000 !== 0;

/** git variables no `git status` answer depends on. */
const STATUS_BLIND = /^GIT_(AUTHOR_|COMMITTER_|SSL_|SSH|TRACE|ASKPASS$|EDITOR$|PAGER$|TERMINAL_PROMPT$)/;

/** A worktree with more entries than this (an ignored dependency folder) is left to git. */
const MAX_ENTRIES = 5000;

interface CacheEntry {
  key: string;
  count: number;
  /** The index's identity when counted; absent in entries from before it was kept. */
  indexId?: string;
}

interface Key {
  key: string;
  /** The worktree's index file and its identity when the key was made. */
  index: string;
  indexId: string | null;
}

/**
 * What `git status` reads in each worktree, hashed; null for one where that cannot be said
 * cheaply and surely. The worktrees' files are listed by one `find` (GNU `-printf`): stat
 * calls from JavaScript cost a new process three times what git's own walk does, in
 * allocation and unoptimized code. Where `find` has no `-printf`, every key is null.
 */
export async function worktreeKeys(
  worktrees: readonly string[],
  settleMs?: number,
  now = Date.now(),
): Promise<(Key | null)[]> {
  const since = (fine: boolean) => now - (settleMs ?? (fine ? FINE_SETTLE_MS : SETTLE_MS));
  // Each file against its own filesystem's window.
  const recent = (s: Stats) => {
    const t = since(subSecond(s));
    return !(s.mtimeMs < t && s.ctimeMs < t);
  };
  const shared = sharedFiles();
  const named = new Map<string, string[]>();
  // The common dir's files and the person's are the same for every worktree: stat once.
  const stats = new Map<string, Stats | null>();
  const statOnce = (f: string) => {
    if (!stats.has(f)) stats.set(f, stat(f));
    return stats.get(f)!;
  };
  const env = gitEnv();
  const heads = worktrees.map((w) => gitSide(w, shared, recent, statOnce, env, named));
  const walkable = worktrees.filter((w, k) => heads[k] && isAbsolute(w));
  // One `find` for them all, so one window: the short one only where every worktree's own
  // folder shows fine timestamps (its files are on its filesystem).
  const fine = heads.every((h) => !h || h.fine);
  const walked = await walk(walkable, since(fine) / 1000);
  return worktrees.map((w, k) => {
    const head = heads[k];
    const files = walked.get(w);
    if (!head || !files) return null;
    head.hash.update(files);
    return { key: head.hash.digest('hex'), index: head.index, indexId: head.indexId };
  });
}

/**
 * The git variables in this process that change what git answers (GIT_DIR, GIT_INDEX_FILE, …),
 * as one string; identity, transport and tracing ones do not, and differ between a person's
 * shell and an agent's.
 */
export function gitEnv(): string {
  return Object.entries(process.env)
    .filter(([n]) => n.startsWith('GIT_') && !STATUS_BLIND.test(n))
    .sort()
    .map(([name, value]) => `${name}=${value}\0`)
    .join('');
}

/** The git files every worktree's status reads: the person's and the system's config and excludes. */
export function sharedFiles(): string[] {
  const xdg = process.env.XDG_CONFIG_HOME || join(homedir(), '.config');
  const configs = [join(homedir(), '.gitconfig'), join(xdg, 'git', 'config'), '/etc/gitconfig'];
  // Where these name the person's or the system's config instead.
  for (const v of ['GIT_CONFIG_GLOBAL', 'GIT_CONFIG_SYSTEM']) if (process.env[v]) configs.push(process.env[v]!);
  return [...configs, join(xdg, 'git', 'ignore'), ...namedFiles(configs)];
}

/**
 * The files config files name that git reads beside them: an excludes file (`core.excludesFile`)
 * and included config (`include.path`, `includeIf.*.path`), and what those name in turn. Read
 * as text, so any `excludesFile` or `path` line counts (more files in a key only make it change
 * more often); a relative path is taken from the naming file's folder. `memo`: texts read already.
 */
export function namedFiles(configs: readonly string[], memo = new Map<string, string[]>()): string[] {
  const out = new Set<string>();
  const visit = (file: string, depth: number) => {
    if (depth > 10) return;
    if (!memo.has(file)) memo.set(file, namesIn(file));
    for (const named of memo.get(file)!) {
      if (out.has(named)) continue;
      out.add(named);
      visit(named, depth + 1);
    }
  };
  configs.forEach((f) => visit(f, 0));
  return [...out];
}

function namesIn(file: string): string[] {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch {
    return [];
  }
  return [...text.matchAll(/^\s*(?:excludesfile|path)\s*=\s*(.*)$/gim)].flatMap((m) => {
    const raw = m[1]!.trim();
    const v = raw.startsWith('"') ? raw.slice(1, raw.indexOf('"', 1)) : raw.replace(/\s*[;#].*$/, '');
    if (!v) return [];
    if (v === '~' || v.startsWith('~/')) return [join(homedir(), v.slice(1))];
    return [isAbsolute(v) ? v : join(dirname(file), v)];
  });
}

/** HEAD, its branch, the index and the config and exclude files of a linked worktree, hashed so far. */
function gitSide(
  worktree: string,
  shared: readonly string[],
  recent: (s: Stats) => boolean,
  statOf: (path: string) => Stats | null,
  env: string,
  named: Map<string, string[]>,
): { hash: Hash; index: string; indexId: string; fine: boolean } | null {
  const h = createHash('sha1');
  try {
    const top = stat(worktree);
    if (!top) return null;
    // A linked worktree: `.git` is a file naming its git dir, whose `commondir` names the repository's.
    const pointer = readFileSync(join(worktree, '.git'), 'utf8');
    if (!pointer.startsWith('gitdir: ')) return null;
    const gitDir = absolute(worktree, pointer.slice('gitdir: '.length).trim());
    const common = absolute(gitDir, readFileSync(join(gitDir, 'commondir'), 'utf8').trim());
    const head = readFileSync(join(gitDir, 'HEAD'), 'utf8');
    h.update(`${pointer}\0${gitDir}\0${common}\0${head}\0`);
    if (head.startsWith('ref: ')) h.update(`${read(join(common, head.slice(5).trim()))}\0`);
    const index = join(gitDir, 'index');
    // HEAD and its branch's file by their times too: a commit made, or a branch moved, in the
    // window is recent, as any file of the worktree is.
    const files = [
      index,
      join(gitDir, 'HEAD'),
      ...(head.startsWith('ref: ') ? [join(common, head.slice(5).trim())] : []),
      join(gitDir, 'config.worktree'),
      join(common, 'packed-refs'),
      join(common, 'config'),
      join(common, 'info', 'exclude'),
      ...shared,
      ...namedFiles([join(common, 'config'), join(gitDir, 'config.worktree')], named),
    ];
    let indexId = '';
    for (const f of files) {
      const s = f === index ? stat(f) : statOf(f);
      if (s && recent(s)) return null;
      if (f === index) indexId = s ? identity(s) : '';
      h.update(`${f}\0${s ? identity(s) : '-'}\0`);
    }
    if (!indexId) return null;
    h.update(env);
    return { hash: h, index, indexId, fine: subSecond(top) };
  } catch {
    return null;
  }
}

/**
 * Each worktree's every file and folder with its identity (type, mode, inode, size, mtime and
 * ctime), as one string per worktree; a worktree is left out when anything in it was written
 * after `sinceSecs`, it holds a nested repository or submodule, or it has more than
 * `MAX_ENTRIES` entries. A folder's identity changes when an entry in it is added, removed or
 * renamed; a file's with any write, even one that sets its mtime back (ctime).
 *
 * `find` prints two fields per entry, its path below the worktree (empty for the worktree
 * itself, which starts the next worktree's run) and its identity, or `!` for an entry written
 * since `sinceSecs` and `G` for a `.git`, which is printed, not entered. So each worktree's
 * identity is one stretch of the output, read without parsing a record (docs/benchmarks-work.md,
 * "Review of 50 worktree agents").
 */
async function walk(worktrees: readonly string[], sinceSecs: number): Promise<Map<string, string>> {
  if (worktrees.length === 0) return new Map();
  // A millisecond early: an entry written at the very instant counts as recent.
  const since = `@${(sinceSecs - 0.001).toFixed(3)}`;
  const args = ['-P', ...worktrees, '(', '-name', '.git', '-printf', '%P\\0G\\0', '-prune', ')', '-o'];
  args.push('(', '-newermt', since, '-o', '-newerct', since, ')', '-printf', '%P\\0!\\0', '-o');
  args.push('-printf', '%P\\0%y %m %i %s %T@ %C@\\0');
  const out = await new Promise<string | null>((done) => {
    const child = execFile('find', args, { encoding: 'utf8', maxBuffer: 256 * 1024 * 1024 }, (err, stdout) =>
      done(err ? null : stdout),
    );
    child.stdin?.on('error', () => undefined).end();
  });
  // A worktree gone meanwhile (find's error) would shift every run after it: none is cached.
  if (out === null) return new Map();
  const fields = out.split('\0');
  const found = new Map<string, string>();
  let k = -1;
  let from = 0;
  let at = 0;
  let ok = false;
  let entries = 0;
  const close = () => {
    if (k >= 0 && ok) found.set(worktrees[k]!, out.slice(from, at));
  };
  for (let i = 0; i + 1 < fields.length; i += 2) {
    const path = fields[i]!;
    const id = fields[i + 1]!;
    if (path === '') {
      close();
      k++;
      from = at;
      ok = true;
      entries = 0;
    } else if (id === '!' || (id === 'G' && path !== '.git') || path === '.gitmodules' || ++entries > MAX_ENTRIES)
      ok = false;
    at += path.length + id.length + 2;
  }
  close();
  return k === worktrees.length - 1 ? found : new Map();
}

const absolute = (from: string, p: string) => (isAbsolute(p) ? p : join(from, p));
const identity = (s: Stats) => `${s.mode}:${s.ino}:${s.size}:${s.mtimeMs}:${s.ctimeMs}`;

function stat(path: string): Stats | null {
  try {
    return lstatSync(path);
  } catch {
    return null;
  }
}

export function fileId(path: string): string | null {
  const s = stat(path);
  return s ? identity(s) : null;
}

function read(path: string): string {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return '-';
  }
}

/** A worktree's entry: one file named by its path's hash. */
const entryFile = (dir: string, worktree: string) =>
  join(dir, `${createHash('sha1').update(worktree).digest('hex').slice(0, 24)}.json`);

function readEntry(dir: string, worktree: string): CacheEntry | null {
  try {
    const e = JSON.parse(readFileSync(entryFile(dir, worktree), 'utf8')) as Partial<CacheEntry> & {
      v?: unknown;
      worktree?: unknown;
    };
    if (e.v !== 1 || e.worktree !== worktree || typeof e.key !== 'string' || !Number.isInteger(e.count)) return null;
    return { key: e.key, count: e.count!, ...(typeof e.indexId === 'string' ? { indexId: e.indexId } : {}) };
  } catch {
    return null;
  }
}

function writeEntry(dir: string, worktree: string, entry: CacheEntry): void {
  const file = entryFile(dir, worktree);
  const tmp = `${file}.${process.pid}.tmp`;
  try {
    mkdirSync(dir, { recursive: true });
    writeFileSync(tmp, JSON.stringify({ v: 1, worktree, ...entry }));
    renameSync(tmp, file);
  } catch {
    // A cache that cannot be written only costs the next review its git runs.
  }
}
