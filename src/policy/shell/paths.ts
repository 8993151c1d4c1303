import type { Word } from './words.js';

/**
 * Paths as the shell gate compares them, always lexically (the gate never looks at the disk,
 * docs/security.md): `//dev/x`, `/dev/./x` and `/tmp/../dev/x` are `/dev/x`, and a relative
 * operand is read in the directory the command runs in, when the command line moved there.
 */

/**
 * The directory a command runs in: `undefined` is the directory the command line started in
 * (the agent's own, where relative paths stay relative); a string is a known absolute
 * directory (`/usr`, `~`, `~/src`); `null` is one the gate cannot know (`cd "$X"`, `cd -`
 * with no known previous, `cd ..` from the start).
 */
export type Cwd = string | null | undefined;

/** `//a/./b/../c/` → `/a/c`, `~/x/..` → `~`; anything not absolute or under `~` is returned as is. */
export function normalizePathText(s: string): string {
  if (!/^(\/|~(\/|$))/.test(s)) return s;
  const home = s.startsWith('~');
  const parts: string[] = [];
  for (const seg of s.split('/').slice(1)) {
    if (seg === '' || seg === '.') continue;
    if (seg === '..') parts.pop();
    else parts.push(seg);
  }
  const body = parts.join('/');
  if (home) return body ? `~/${body}` : '~';
  return `/${body}`;
}

/** The directory `cd DIR` moves to from `cwd`. */
export function changeDir(cwd: Cwd, dir: Word | undefined): Cwd {
  // `cd` alone goes HOME.
  if (dir === undefined) return '~';
  const v = dir.value;
  if (v === undefined)
    return /^\$HOME(\/|$)/.test(dir.symbolic) && !dir.symbolic.slice(5).includes('$')
      ? normalizePathText(`~${dir.symbolic.slice(5)}`)
      : null;
  if (/^(\/|~(\/|$))/.test(v)) return normalizePathText(v);
  if (cwd === undefined || cwd === null) return null;
  return normalizePathText(`${cwd}/${v}`);
}

/**
 * An operand read in `cwd`: relative words become absolute (a known directory) or words the
 * gate cannot know (an unknown one). Absolute words and the starting directory change nothing.
 */
export function inDir(w: Word, cwd: Cwd): Word {
  if (cwd === undefined) return w;
  const first = w.value ?? w.symbolic;
  // An expansion at the front may be absolute already: its glob is `*…`, which covers both.
  if (/^(\/|~(\/|$))/.test(first) || (w.value === undefined && w.glob.startsWith('*') && !w.hasGlob)) return w;
  if (w.value === undefined && /^\$/.test(w.symbolic)) return w;
  if (cwd === null) return { ...w, value: undefined, symbolic: `$PWD/${w.symbolic}`, glob: `*/${w.glob}` };
  return {
    ...w,
    value: w.value === undefined ? undefined : `${cwd}/${w.value}`,
    symbolic: `${cwd}/${w.symbolic}`,
    glob: `${cwd.replace(/[\\*?[\]{}]/g, '\\$&')}/${w.glob}`,
  };
}

/** A file's path as a key: read in `cwd`, normalized; undefined when the gate cannot know it. */
export function fileKey(w: Word, cwd: Cwd): string | undefined {
  const word = inDir(w, cwd);
  return word.value === undefined ? undefined : normalizePathText(word.value.replace(/^(\.\/)+/, ''));
}
