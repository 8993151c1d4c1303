import { spawn } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import type { Stats } from 'node:fs';
import { homedir } from 'node:os';
import { delimiter, dirname, join } from 'node:path';
import { git, SAFE_GIT } from './git.js';

/** A worktree `review` may answer "nothing uncommitted" for without `git status`. */
export interface CleanCheck {
  worktree: string;
  gitDir: string;
  common: string;
  /** HEAD's content (`ref: refs/heads/…`). */
  head: string;
  /** Its walk as status-cache's `find` printed it: `path\0identity\0` from the worktree's own record. */
  walk: string;
  /** The index's identity (`identity`) when the walk was keyed. */
  indexId: string;
}

/** A file's identity: any write, even one that sets its mtime back, changes it. */
export const identity = (s: Stats) => `${s.mode}:${s.ino}:${s.size}:${s.mtimeMs}:${s.ctimeMs}`;

/**
 * For each worktree, whether `git status --porcelain --untracked-files=all` would list nothing,
 * answered without it as git's own check does (docs/benchmarks-work.md, "Sixth round"): every
 * index entry's stat data matches its file (mtime and ctime, ino, uid, gid, size, the owner's x
 * bit), the worktree holds no file the index lacks, and the tree the index entries make is
 * HEAD's. An entry written in the index's second or later ("racy") is hashed as git hashes it,
 * and only where no conversion can apply. false is "ask git", never "changed": an entry git
 * would flag, an index version or extension not read here, a git variable, anything unusual.
 * `env`: the git variables that change git's answers (status-cache's `gitEnv`); `configFiles`:
 * the person's and the system's git config files; `scratch`: a folder of the host's for a moment's file.
 */
export async function cleanWithoutGit(
  checks: readonly CleanCheck[],
  env: string,
  configFiles: readonly string[],
  scratch: string,
): Promise<boolean[]> {
  if (env !== '' || checks.length === 0) return checks.map(() => false);
  const read = checks.map((c) => matchIndex(c));
  const live = read.flatMap((r, k) => (r ? [k] : []));
  const racy = live.flatMap((k) => read[k]!.racy.map((e) => ({ k, e })));
  const commons = [...new Set(live.map((k) => checks[k]!.common))];
  const free = new Map<number, boolean>();
  const hashable = (k: number) => free.get(k) ?? free.set(k, conversionFree(checks[k]!, configFiles)).get(k)!;
  const [trees, hashes] = await Promise.all([
    Promise.all(commons.map((c) => headTrees(c))),
    hashFiles(
      racy.flatMap(({ k, e }) => (hashable(k) ? [`${checks[k]!.worktree}/${e.path}`] : [])),
      scratch,
    ),
  ]);
  const treeOf = new Map(commons.map((c, n) => [c, trees[n]!]));
  const ok = read.map((r, k) => {
    const ref = checks[k]!.head.startsWith('ref: ') ? checks[k]!.head.slice(5).trim() : null;
    return !!r && !!ref && r.tree === treeOf.get(checks[k]!.common)?.get(ref);
  });
  // Racy entries in the order hashed: each must be its index entry's blob.
  let n = 0;
  for (const { k, e } of racy) {
    if (!hashable(k)) ok[k] = false;
    else if (hashes?.[n++] !== oidHex(e)) ok[k] = false;
  }
  return ok;
}

/** An index entry: its name's bytes (`b`, `s`…`e`), path, mode, and where its stat data and id are in `idx`. */
interface Entry {
  b: Buffer;
  s: number;
  e: number;
  path: string;
  mode: number;
  idx: Buffer;
  at: number;
}

const u32 = (b: Buffer, o: number) => b[o]! * 0x1000000 + (b[o + 1]! << 16) + ((b[o + 2]! << 8) | b[o + 3]!);
const oidHex = (e: Entry) => e.idx.toString('hex', e.at + 40, e.at + 60);

/**
 * The worktree's index against its walk: null on any doubt; else the tree its entries make and
 * the entries git would hash (racy). The index is the one keyed (same identity) or null.
 */
function matchIndex(c: CleanCheck): { tree: string; racy: Entry[] } | null {
  try {
    const fd = fs.openSync(join(c.gitDir, 'index'), 'r');
    let buf: Buffer;
    let st: Stats;
    try {
      st = fs.fstatSync(fd);
      buf = fs.readFileSync(fd);
    } finally {
      fs.closeSync(fd);
    }
    if (identity(st) !== c.indexId) return null;
    const entries = parseIndex(buf);
    const files = entries && walkFiles(c.walk);
    if (!entries || !files || files.size !== entries.length) return null;
    const indexSecs = Math.floor(st.mtimeMs / 1000);
    const racy: Entry[] = [];
    for (const e of entries) {
      const id = files.get(e.path);
      if (id === undefined || !statMatches(e, id)) return null;
      if (u32(e.idx, e.at + 8) < indexSecs) continue;
      // A link's target is compared as it is, whatever the attributes say.
      if (e.mode !== 0o120000) racy.push(e);
      else if (blobId(fs.readlinkSync(`${c.worktree}/${e.path}`, { encoding: 'buffer' })) !== oidHex(e)) return null;
    }
    const tree = treeHash(entries, 0, entries.length, 0);
    return tree ? { tree: tree.toString('hex'), racy } : null;
  } catch {
    return null;
  }
}

/** The id git gives these bytes as a blob. */
const blobId = (b: Buffer) => createHash('sha1').update(`blob ${b.length}\0`).update(b).digest('hex');

/** The walk's files and links by path (folders need no match: git lists no empty folder); null on an odd entry. */
function walkFiles(walk: string): Map<string, string> | null {
  const f = walk.split('\0');
  const files = new Map<string, string>();
  for (let i = 0; i + 1 < f.length; i += 2) {
    const path = f[i]!;
    const id = f[i + 1]!;
    const t = id.charCodeAt(0);
    if (path === '' || id === 'G' || t === 100 /* d */) continue;
    if ((t !== 102 /* f */ && t !== 108) /* l */ || id.charCodeAt(1) !== 32 || path.includes('\uFFFD')) return null;
    files.set(path, id);
  }
  return files;
}

/**
 * `find`'s `%y %m %i %s %T@ %C@ %U %G` against the entry as git's `ie_match_stat` compares, or
 * more strictly: the owner's x bit (git keeps no other), the whole inode, seconds and, where the
 * index kept them (a git built without them writes 0), nanoseconds. First as one string made
 * from the entry's own (the common case), else field by field (a 64-bit inode, no nanoseconds).
 */
function statMatches(e: Entry, id: string): boolean {
  const sp = id.indexOf(' ', 2);
  const x = (parseInt(id.slice(2, sp), 8) & 0o100) !== 0;
  if (e.mode !== (id.charCodeAt(0) === 108 ? 0o120000 : x ? 0o100755 : 0o100644)) return false;
  const b = e.idx;
  const o = e.at;
  const own = `${u32(b, o + 20)} ${u32(b, o + 36)} ${time(b, o + 8)} ${time(b, o)} ${u32(b, o + 28)} ${u32(b, o + 32)}`;
  if (id.length === sp + 1 + own.length && id.endsWith(own)) return true;
  const r = { at: sp + 1 };
  const ino = digits(id, r);
  return (
    ino >= 0 &&
    ino % 2 ** 32 === u32(b, o + 20) &&
    digits(id, r) === u32(b, o + 36) &&
    timeMatches(id, r, u32(b, o + 8), u32(b, o + 12)) &&
    timeMatches(id, r, u32(b, o), u32(b, o + 4)) &&
    digits(id, r) === u32(b, o + 28) &&
    digits(id, r) === u32(b, o + 32)
  );
}

/** An index time (seconds, nanoseconds at `o`) as `find`'s `%T@` prints it. */
const time = (b: Buffer, o: number) => `${u32(b, o)}.${String(u32(b, o + 4)).padStart(9, '0')}0`;

/** The number at `r.at` (up to 15 digits, so exact) and past the one character after it; -1 when there is none. */
function digits(s: string, r: { at: number }, radix = 10): number {
  let v = 0;
  const from = r.at;
  for (; r.at < s.length; r.at++) {
    const d = s.charCodeAt(r.at) - 48;
    if (d < 0 || d >= radix) break;
    v = v * radix + d;
  }
  const n = r.at - from;
  r.at++;
  return n === 0 || n > 15 ? -1 : v;
}

/** `find`'s `%T@` (seconds, a point, ten digits) at `r.at` against seconds and nanoseconds. */
function timeMatches(s: string, r: { at: number }, secs: number, nsecs: number): boolean {
  if (digits(s, r) !== secs || s.charCodeAt(r.at - 1) !== 46) return false;
  const from = r.at;
  const frac = digits(s, r);
  if (r.at - from !== 11) return false;
  return nsecs === 0 || Math.floor(frac / 10) === nsecs;
}

/** Extensions that change nothing `git status` lists: the cache tree, resolve-undo, and offset tables. */
const KNOWN_EXTENSIONS = new Set(['TREE', 'REUC', 'EOIE', 'IEOT']);

/**
 * The entries of an index of version 2, 3 or 4 (gitformat-index), sorted and at stage 0; null
 * for anything else: a flag (assume-unchanged, skip-worktree, intent-to-add, a conflict stage),
 * a mode other than a file's or a link's, an extension not known to change nothing (a split or
 * sparse index, the untracked cache, fsmonitor), a short or odd file.
 */
function parseIndex(buf: Buffer): Entry[] | null {
  if (buf.length < 32 || buf.toString('latin1', 0, 4) !== 'DIRC') return null;
  const version = buf.readUInt32BE(4);
  if (version < 2 || version > 4) return null;
  const count = buf.readUInt32BE(8);
  const end = buf.length - 20;
  const entries: Entry[] = [];
  let at = 12;
  let prev: Entry | null = null;
  for (let i = 0; i < count; i++) {
    if (at + 62 > end) return null;
    const mode = buf.readUInt32BE(at + 24);
    if (buf.readUInt16BE(at + 60) & 0xf000 || (mode !== 0o100644 && mode !== 0o100755 && mode !== 0o120000))
      return null;
    let e: Entry;
    let next: number;
    if (version === 4) {
      const [strip, from] = varint(buf, at + 62, end);
      const nul = buf.indexOf(0, from);
      const had = prev ? prev.e - prev.s : 0;
      if (strip < 0 || strip > had || nul < 0 || nul >= end) return null;
      const kept = prev ? prev.b.subarray(prev.s, prev.e - strip) : Buffer.alloc(0);
      const name = Buffer.concat([kept, buf.subarray(from, nul)]);
      e = { b: name, s: 0, e: name.length, path: '', mode, idx: buf, at };
      next = nul + 1;
    } else {
      const nul = buf.indexOf(0, at + 62);
      if (nul < 0 || nul >= end) return null;
      e = { b: buf, s: at + 62, e: nul, path: '', mode, idx: buf, at };
      next = at + ((62 + nul - at - 62 + 8) & ~7);
    }
    e.path = e.b.toString('utf8', e.s, e.e);
    // Sorted, each path once, and one a walk's path can be matched with.
    if (e.e === e.s || e.path.includes('\uFFFD')) return null;
    if (prev && prev.b.compare(e.b, e.s, e.e, prev.s, prev.e) >= 0) return null;
    entries.push(e);
    prev = e;
    at = next;
  }
  while (at < end) {
    if (at + 8 > end || !KNOWN_EXTENSIONS.has(buf.toString('latin1', at, at + 4))) return null;
    at += 8 + buf.readUInt32BE(at + 4);
  }
  return at === end ? entries : null;
}

/** git's offset varint (index version 4); [-1, …] when it runs past `end`. */
function varint(buf: Buffer, at: number, end: number): [number, number] {
  if (at >= end) return [-1, at];
  let c = buf[at++]!;
  let v = c & 127;
  while (c & 128) {
    if (at >= end || v > 2 ** 40) return [-1, at];
    c = buf[at++]!;
    v = (v + 1) * 128 + (c & 127);
  }
  return [v, at];
}

const MODE_BYTES = new Map([0o100644, 0o100755, 0o120000, 0o40000].map((m) => [m, Buffer.from(`${m.toString(8)} `)]));

/** The tree object id the sorted entries [lo, hi) below a folder of `pre` bytes make, as `git write-tree` would. */
function treeHash(entries: readonly Entry[], lo: number, hi: number, pre: number): Buffer | null {
  // The tree's body in pieces: bytes[n] from[n]…to[n].
  const bytes: Buffer[] = [];
  const from: number[] = [];
  const to: number[] = [];
  let len = 0;
  const put = (b: Buffer, f: number, t: number) => {
    bytes.push(b);
    from.push(f);
    to.push(t);
    len += t - f;
  };
  for (let i = lo; i < hi;) {
    const e = entries[i]!;
    const start = e.s + pre;
    const slash = e.b.indexOf(0x2f, start);
    if (slash === start || slash === e.e - 1) return null;
    if (slash < 0 || slash >= e.e) {
      const mode = MODE_BYTES.get(e.mode)!;
      put(mode, 0, mode.length);
      put(e.b, start, e.e);
      put(NUL, 0, 1);
      put(e.idx, e.at + 40, e.at + 60);
      i++;
      continue;
    }
    const dirLen = slash - start + 1;
    let j = i + 1;
    for (; j < hi; j++) {
      const o = entries[j]!;
      if (o.e - o.s < pre + dirLen || o.b.compare(e.b, start, slash + 1, o.s + pre, o.s + pre + dirLen) !== 0) break;
    }
    const sub = treeHash(entries, i, j, pre + dirLen);
    if (!sub) return null;
    const mode = MODE_BYTES.get(0o40000)!;
    put(mode, 0, mode.length);
    put(e.b, start, slash);
    put(NUL, 0, 1);
    put(sub, 0, sub.length);
    i = j;
  }
  const body = Buffer.allocUnsafe(len);
  let at = 0;
  for (let n = 0; n < bytes.length; n++) at += bytes[n]!.copy(body, at, from[n], to[n]);
  return createHash('sha1').update(`tree ${len}\0`).update(body).digest();
}

const NUL = Buffer.from([0]);

/** Every local branch's tree by ref name, from one `for-each-ref` in the common dir; empty on failure. */
async function headTrees(common: string): Promise<Map<string, string>> {
  const r = await git(common, ['--git-dir=.', 'for-each-ref', '--format=%(refname)%00%(tree)', 'refs/heads/']);
  if (r.code !== 0) return new Map();
  return new Map(
    r.stdout
      .split('\n')
      .map((l) => l.split('\0'))
      .filter((p) => p.length === 2 && /^[0-9a-f]{40}$/.test(p[1]!))
      .map((p) => [p[0]!, p[1]!] as const),
  );
}

/**
 * Whether git hashes the worktree's files as they are (no attribute, no `core.autocrlf`): no
 * `.gitattributes` in it, no attributes file of the repository's, the person's or the system's,
 * and no config file that sets `autocrlf`, names an attributes file or includes another (a
 * textual look, so a mention anywhere is enough to ask git).
 */
function conversionFree(c: CleanCheck, configFiles: readonly string[]): boolean {
  if (/(^|\0|\/)\.gitattributes\0/.test(c.walk)) return false;
  const etc = systemDirs();
  const xdg = process.env.XDG_CONFIG_HOME || join(homedir(), '.config');
  const attributes = [join(c.common, 'info', 'attributes'), join(xdg, 'git', 'attributes')];
  if ([...attributes, ...etc.map((d) => join(d, 'gitattributes'))].some((f) => fs.existsSync(f))) return false;
  const configs = [...configFiles, ...etc.map((d) => join(d, 'gitconfig'))];
  configs.push(join(c.common, 'config'), join(c.gitDir, 'config.worktree'));
  return configs.every((f) => {
    try {
      return !/autocrlf|attr|include/i.test(fs.readFileSync(f, 'utf8'));
    } catch (e) {
      return (e as NodeJS.ErrnoException).code === 'ENOENT';
    }
  });
}

let systemDirsMemo: string[] | undefined;
/** Where git's system config and attributes may be: /etc, and `<prefix>/etc` of the git on PATH. */
function systemDirs(): string[] {
  if (systemDirsMemo) return systemDirsMemo;
  const dirs = ['/etc'];
  for (const d of (process.env.PATH ?? '').split(delimiter).filter(Boolean)) {
    try {
      dirs.push(join(dirname(dirname(fs.realpathSync(join(d, 'git')))), 'etc'));
      break;
    } catch {
      // Not in this folder.
    }
  }
  return (systemDirsMemo = dirs);
}

/**
 * The blob id of each file as it is (`git hash-object --no-filters`, one process, outside any
 * repository, so no repository's config or attributes apply); null on any failure. Its output
 * goes to a file in `scratch`: through a pipe, Node reads its many flushed lines one by one
 * (three times the hashing's time). Bounded in time: a file swapped for a pipe since the walk
 * must not hang the review.
 */
async function hashFiles(paths: readonly string[], scratch: string): Promise<string[] | null> {
  if (paths.length === 0) return [];
  if (paths.some((p) => p.includes('\n'))) return null;
  const file = join(scratch, `hashes.${process.pid}.${randomBytes(6).toString('hex')}.tmp`);
  let fd: number;
  try {
    fs.mkdirSync(scratch, { recursive: true });
    fd = fs.openSync(file, 'wx+', 0o600);
  } catch {
    return null;
  }
  try {
    const ok = await new Promise<boolean>((done) => {
      const child = spawn('git', [...SAFE_GIT, 'hash-object', '--no-filters', '--stdin-paths'], {
        cwd: '/',
        stdio: ['pipe', fd, 'ignore'],
        timeout: 10_000,
      });
      child.on('error', () => done(false));
      child.on('close', (code) => done(code === 0));
      child.stdin?.on('error', () => undefined).end(`${paths.join('\n')}\n`);
    });
    const out = ok ? fs.readFileSync(file, 'utf8').split('\n') : [];
    return out.length === paths.length + 1 ? out.slice(0, -1) : null;
  } finally {
    fs.closeSync(fd);
    fs.rmSync(file, { force: true });
  }
}
