import { mkdirSync, readFileSync, renameSync, statSync, writeFileSync, type Stats } from 'node:fs';
import { delimiter, isAbsolute, join } from 'node:path';
import { userCacheDir } from '../layout/layout.js';
import { parseTmuxVersion, type TmuxVersion } from './version.js';

/**
 * tmux's version for a spawn's preflight (§5.2) without running `tmux -V` each time (~5–10 ms of a
 * spawn, §14): the answer is kept in the user's cache folder, keyed by the binary PATH finds and its
 * device, inode, size, mtime and ctime, so a tmux upgraded, downgraded or replaced in place is asked
 * again. Where PATH finds no tmux to stat (or only by a relative folder), `ask` answers, uncached.
 */
export async function cachedTmuxVersion(
  ask: () => Promise<TmuxVersion | null>,
  env: NodeJS.ProcessEnv = process.env,
  path: string | undefined = process.env.PATH,
): Promise<TmuxVersion | null> {
  const key = binaryKey(path);
  if (!key) return ask();
  const file = join(userCacheDir(env), 'tmux-version.json');
  try {
    const kept = JSON.parse(readFileSync(file, 'utf8')) as { key?: unknown; raw?: unknown };
    if (kept.key === key && typeof kept.raw === 'string') {
      const v = parseTmuxVersion(kept.raw);
      if (v) return v;
    }
  } catch {
    // None kept, or unreadable: asked below.
  }
  const v = await ask();
  if (v) {
    try {
      mkdirSync(join(file, '..'), { recursive: true });
      const tmp = `${file}.${process.pid}`;
      writeFileSync(tmp, JSON.stringify({ key, raw: v.raw }));
      renameSync(tmp, file);
    } catch {
      // A cache not written is asked again next time.
    }
  }
  return v;
}

/** What names the tmux an exec would run: the first executable `tmux` on PATH, with its file's identity. */
function binaryKey(path: string | undefined): string | null {
  for (const dir of (path ?? '').split(delimiter)) {
    if (!dir) continue;
    if (!isAbsolute(dir)) return null;
    const bin = join(dir, 'tmux');
    let st: Stats;
    try {
      st = statSync(bin);
    } catch {
      continue;
    }
    if (!st.isFile() || (st.mode & 0o111) === 0) continue;
    return [bin, st.dev, st.ino, st.size, st.mtimeMs, st.ctimeMs].join(' ');
  }
  return null;
}
