import { createHmac, randomBytes } from 'node:crypto';
import { appendFileSync, chmodSync, closeSync, mkdirSync, openSync, readFileSync, statSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { isErrno } from '../errors.js';
import type { Layout } from '../layout/layout.js';
import { secretForms, secretMarker } from './redact.js';

/**
 * The fleet's digest set (docs/security-trust.md "Redaction"): for every value any agent of the
 * fleet was granted, a salted digest of each of its spellings — never the value. A harness
 * redacts with it for the rest of the fleet's life: after the grant expires, in a resumed
 * agent, and in every *other* agent (a sibling that read the value from a file or another
 * process). It lives in `state/secrets/` (0700, files 0600), which every sandbox hides, so
 * only the fleet's harnesses and the person's own commands read it.
 *
 * Finding a value by digest: each spelling is stored as its length, a 16-bit rolling
 * fingerprint (Rabin-Karp, base from the salt) and an HMAC-SHA256 with the fleet's salt.
 * A text is scanned once per distinct length; only a window whose fingerprint matches is
 * hashed. The fingerprint gives away 16 bits about a value of at least 8 characters; the
 * HMAC nothing without the salt.
 */

interface Entry {
  key: string;
  len: number;
  fp: number;
  mac: string;
}

const PRIME = 65521;

function saltFile(layout: Pick<Layout, 'secretsDir'>): string {
  return join(layout.secretsDir, 'redact.salt');
}

function setFile(layout: Pick<Layout, 'secretsDir'>): string {
  return join(layout.secretsDir, 'redact.jsonl');
}

function ensureDir(layout: Pick<Layout, 'secretsDir'>): void {
  mkdirSync(layout.secretsDir, { recursive: true, mode: 0o700 });
}

/** The fleet's salt, made once (O_EXCL: two harnesses granting at once agree on it). */
function salt(layout: Pick<Layout, 'secretsDir'>, create: boolean): Buffer | undefined {
  const file = saltFile(layout);
  try {
    return readFileSync(file);
  } catch (err) {
    if (!isErrno(err, 'ENOENT') || !create) return undefined;
  }
  ensureDir(layout);
  try {
    const fd = openSync(file, 'wx', 0o600);
    writeSync(fd, randomBytes(32));
    closeSync(fd);
  } catch (err) {
    if (!isErrno(err, 'EEXIST')) throw err;
  }
  return readFileSync(file);
}

function baseOf(s: Buffer): number {
  return 256 + (s.readUInt16BE(0) % (PRIME - 512));
}

function fingerprint(text: string, from: number, len: number, base: number): number {
  let h = 0;
  for (let i = from; i < from + len; i++) h = (h * base + text.charCodeAt(i)) % PRIME;
  return h;
}

function mac(s: Buffer, text: string): string {
  return createHmac('sha256', s).update(text, 'utf8').digest('hex');
}

/** Adds a granted value's spellings to the fleet's set (before any command sees the value). */
export function recordSecretDigests(layout: Pick<Layout, 'secretsDir'>, key: string, value: string): void {
  const s = salt(layout, true)!;
  const base = baseOf(s);
  const lines = secretForms(value).map((f) =>
    JSON.stringify({ key, len: f.length, fp: fingerprint(f, 0, f.length, base), mac: mac(s, f) } satisfies Entry),
  );
  appendFileSync(setFile(layout), lines.join('\n') + '\n', { mode: 0o600 });
  chmodSync(setFile(layout), 0o600);
}

/**
 * A redactor over the fleet's set, re-read whenever the file grows (one stat per call).
 * Returns its input unchanged when the set is empty or unreadable (inside a sandbox it is
 * hidden: there the harness redacts what a command prints, outside).
 */
export function fleetRedactor(layout: Pick<Layout, 'secretsDir'>): (text: string) => string {
  let size = -1;
  let entries: Entry[] = [];
  let byLen = new Map<number, Entry[]>();
  let s: Buffer | undefined;
  let base = 0;
  const reload = (): void => {
    // One stat a call (a few µs): a value recorded a moment ago must already count here.
    const now = statSync(setFile(layout), { throwIfNoEntry: false })?.size ?? 0;
    if (now === size) return;
    size = now;
    s = salt(layout, false);
    if (!s || now === 0) {
      entries = [];
      byLen = new Map();
      return;
    }
    base = baseOf(s);
    let text = '';
    try {
      text = readFileSync(setFile(layout), 'utf8');
    } catch {
      text = '';
    }
    const seen = new Set<string>();
    entries = [];
    for (const line of text.split('\n')) {
      if (!line) continue;
      try {
        const e = JSON.parse(line) as Entry;
        if (typeof e.key === 'string' && Number.isInteger(e.len) && e.len > 0 && !seen.has(e.mac)) {
          seen.add(e.mac);
          entries.push(e);
        }
      } catch {
        // A line cut short by a crash: the value's other spellings still count.
      }
    }
    byLen = new Map();
    for (const e of entries) byLen.set(e.len, [...(byLen.get(e.len) ?? []), e]);
  };
  return (text: string): string => {
    reload();
    if (!s || entries.length === 0 || text.length === 0) return text;
    const found: { at: number; len: number; key: string }[] = [];
    // Longest spellings first, so a base64 form wins over a shorter value inside it.
    for (const [len, list] of [...byLen].sort((a, b) => b[0] - a[0])) {
      if (text.length < len) continue;
      const fps = new Set(list.map((e) => e.fp));
      // base^(len-1) mod PRIME, to drop the leading character when the window moves.
      let high = 1;
      for (let i = 1; i < len; i++) high = (high * base) % PRIME;
      let h = fingerprint(text, 0, len, base);
      for (let i = 0; ; i++) {
        if (fps.has(h)) {
          const m = mac(s, text.slice(i, i + len));
          const hit = list.find((e) => e.fp === h && e.mac === m);
          if (hit && !found.some((f) => i < f.at + f.len && f.at < i + len)) found.push({ at: i, len, key: hit.key });
        }
        if (i + len >= text.length) break;
        h = (h - ((text.charCodeAt(i) * high) % PRIME) + PRIME) % PRIME;
        h = (h * base + text.charCodeAt(i + len)) % PRIME;
      }
    }
    if (found.length === 0) return text;
    found.sort((a, b) => a.at - b.at);
    let out = '';
    let last = 0;
    for (const f of found) {
      out += text.slice(last, f.at) + secretMarker(f.key);
      last = f.at + f.len;
    }
    return out + text.slice(last);
  };
}
