import { closeSync, openSync, readSync } from 'node:fs';
import { FlotillaError, UsageError } from '../errors.js';

/** Agent ids and definition names: §1. */
export const ID_PATTERN = /^[a-zA-Z0-9][a-zA-Z0-9_-]{0,63}$/;

const BASE36 = '0123456789abcdefghijklmnopqrstuvwxyz';

/**
 * `length` uniformly random base-36 characters, from the kernel's random source. Not nanoid
 * nor node:crypto: nanoid reaches for Web Crypto, whose first use cost up to 10 ms of every
 * `flotilla send`, and loading node:crypto costs ~6 ms (§14).
 */
function randomBase36(length: number): string {
  let out = '';
  const bytes = Buffer.alloc(length * 2);
  while (out.length < length) {
    randomBytes(bytes);
    // 252 = 7 × 36: bytes above it are dropped so every character is equally likely.
    for (const b of bytes) if (b < 252 && out.length < length) out += BASE36[b % 36];
  }
  return out;
}
/**
 * Fills `buf` from /dev/urandom (cryptographically strong, never blocks once the system has booted); node:crypto where
 * there is none.
 */
function randomBytes(buf: Buffer): void {
  let fd: number;
  try {
    fd = openSync('/dev/urandom', 'r');
  } catch {
    process.getBuiltinModule('node:crypto').randomFillSync(buf);
    return;
  }
  try {
    for (let off = 0; off < buf.length;) off += readSync(fd, buf, off, buf.length - off, null);
  } finally {
    closeSync(fd);
  }
}

const suffix = (): string => randomBase36(6);
const random = (): string => randomBase36(10);

/** A fresh agent id: `<name>-<6 chars>`, e.g. `reviewer-7k2m9q`. */
export function newAgentId(name: string): string {
  const base = name.slice(0, 57);
  return `${base}-${suffix()}`;
}

/** Checks a caller-given id (`--id`). */
export function assertValidId(id: string, what = 'id'): void {
  if (!ID_PATTERN.test(id)) {
    throw new UsageError(
      `invalid ${what} '${id}': use 1-64 letters, digits, '_' or '-', starting with a letter or digit`,
    );
  }
}

let lastMs = 0;
let lastRandom = 0n;
const RANDOM_SPACE = 36n ** 10n;

/**
 * A unique, time-sortable id for messages and events: 9 base-36 chars of milliseconds,
 * then 10 random chars. Sorting the strings sorts by time, and ids made by one process in
 * the same millisecond still sort in the order they were made (the random part counts up).
 */
export function newSortableId(now = Date.now()): string {
  let ms = now;
  let rnd: bigint;
  if (ms === lastMs && lastRandom + 1n < RANDOM_SPACE) {
    rnd = lastRandom + 1n;
  } else {
    // Leave room below the top so same-millisecond ids can count up from here.
    rnd = BigInt(parseInt(random().slice(0, 8), 36)) * 36n ** 2n;
    if (ms === lastMs) ms += 1;
  }
  lastMs = ms;
  lastRandom = rnd;
  return ms.toString(36).padStart(9, '0') + rnd.toString(36).padStart(10, '0');
}

/**
 * Resolves a unique prefix among candidates (§1). An exact match wins; an ambiguous
 * prefix lists the candidates; no match says how to list them.
 */
export function resolvePrefix(prefix: string, candidates: readonly string[], what = 'agent'): string {
  if (candidates.includes(prefix)) return prefix;
  const matches = candidates.filter((c) => c.startsWith(prefix));
  if (matches.length === 1) return matches[0]!;
  if (matches.length === 0) {
    throw new FlotillaError(`no ${what} matches '${prefix}' — run 'flotilla status' to list agents`, {
      code: 'not-found',
    });
  }
  const shown = matches.slice(0, 10).join(', ') + (matches.length > 10 ? `, … (${matches.length} in all)` : '');
  throw new FlotillaError(`'${prefix}' matches ${matches.length} ${what}s: ${shown} — give more characters`, {
    code: 'ambiguous',
  });
}
