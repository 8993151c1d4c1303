import { refusal, type FlotillaError } from '../errors.js';
import { MINIMUM, versionAtLeast } from '../versions.js';

/** A parsed `tmux -V`. `next-3.4` is a development build of 3.4; `master` is newer than any release. */
export interface TmuxVersion {
  raw: string;
  major: number;
  minor: number;
  /** Letter or rc suffix, e.g. `a` of `3.3a`, `rc5` of `3.0-rc5`; '' when none. */
  suffix: string;
  /** A development build (`next-…`, `master`). */
  next: boolean;
}

/** Parses `tmux -V` output (`tmux 3.3a`, `tmux next-3.4`, `tmux 3.0-rc5`, `tmux master`); null when unrecognised. */
export function parseTmuxVersion(text: string): TmuxVersion | null {
  const raw = text.trim();
  const word = raw.replace(/^tmux\s+/, '');
  if (/^master\b/.test(word)) return { raw, major: Number.POSITIVE_INFINITY, minor: 0, suffix: '', next: true };
  const m = /^(next-)?(\d+)\.(\d+)(?:-?([a-z][a-z0-9]*))?/.exec(word);
  if (!m) return null;
  return { raw, major: Number(m[2]), minor: Number(m[3]), suffix: m[4] ?? '', next: Boolean(m[1]) };
}

/**
 * True when `v` is at least the oldest tmux Flotilla supports (MINIMUM in versions.ts:
 * `new-session -e`, per-pane options and hooks); a `next-3.4` build counts as 3.4.
 */
export function tmuxNewEnough(v: TmuxVersion): boolean {
  return !Number.isFinite(v.major) || versionAtLeast(`${v.major}.${v.minor}`, MINIMUM.tmux);
}

/** The refusal for a missing or too old tmux (§5.2); null when `v` is new enough. */
export function tmuxVersionRefusal(v: TmuxVersion | null): FlotillaError | null {
  const min = MINIMUM.tmux;
  if (v === null) {
    return refusal(
      'tmux-missing',
      `spawn refused: tmux is not installed or not on PATH — install tmux ≥ ${min}, or spawn with --background`,
      { min },
    );
  }
  if (tmuxNewEnough(v)) return null;
  const have = `${v.major}.${v.minor}${v.suffix}`;
  return refusal(
    'tmux-too-old',
    `spawn refused: tmux ${have} is too old — Flotilla needs tmux ≥ ${min}; upgrade tmux, or spawn with --background`,
    { version: have, min },
  );
}
