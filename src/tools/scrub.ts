/**
 * Escapes the harness's own markers in text that came from outside the harness (tool output,
 * hook output and denial reasons, message bodies, memory, parent context), so that text
 * cannot pose as an inbox message, a memory block, a system reminder or the parent's context
 * (§6). Only the `<` that opens or closes a marker tag is touched (`<inbox-message` →
 * `&lt;inbox-message`); everything else is left as the model would see it.
 *
 * A model reads look-alikes as the tag they imitate, so a marker is looked for in a skeleton
 * of the text, not the text itself: each character NFKC-normalised (fullwidth `＜ｉｎｂｏｘ`,
 * small `﹤`), format characters (Unicode Cf: zero-width spaces and joiners, soft hyphens,
 * bidi controls) dropped, dashes and `<`-like brackets folded to `-` and `<`. The `<` found
 * there is escaped at its place in the original text. Pure: secret redaction (§11)
 * composes with it (redact, then scrub).
 */

const MARKER_NAMES = ['inbox-message', 'agent-memory', 'system-reminder', 'parent-context'] as const;

// In the skeleton: `<`, then up to three separators (anything but a letter, a digit or `>`),
// optional `/`, then up to three more, then a marker name with up to three separators between
// *any* two of its letters: `< inbox_message`, `<in-box-message`, `<i n b o x - m e s s a g e`
// all read as the tag to a model, so all are escaped. Matched by hand (markerAt), not by a
// regular expression: the one this was (its Unicode classes, case-insensitive) cost V8 ~60 ms of
// CPU to compile at its first two runs, in every agent that scrubbed one `<`.
const NAMES: readonly string[] = MARKER_NAMES.map((n) => n.replace(/-/g, ''));
const MAX_SEPARATORS = 3;
let letterOrDigit: RegExp | undefined;

/** Whether the code point `cp` is a separator: neither a letter, a digit nor `>`. */
function isSeparator(cp: number): boolean {
  if (cp < 0x80)
    return !((cp >= 0x30 && cp <= 0x39) || (cp >= 0x41 && cp <= 0x5a) || (cp >= 0x61 && cp <= 0x7a) || cp === 0x3e);
  return !(letterOrDigit ??= /^[\p{L}\p{N}]$/u).test(String.fromCodePoint(cp));
}

/** The run of separators at `k` in `s` (code points; `max + 1` at most, enough to tell it is too long), and its end. */
function separatorsAt(s: string, k: number, max: number): { run: number[]; end: number } {
  const run: number[] = [];
  for (let cp = s.codePointAt(k); cp !== undefined && run.length <= max && isSeparator(cp); cp = s.codePointAt(k)) {
    run.push(cp);
    k += cp > 0xffff ? 2 : 1;
  }
  return { run, end: k };
}

/**
 * Whether the `<` at `at` in `s` opens a marker: after it two runs of up to three separators, or seven with the `/`
 * between them, then a name. Letters match case-insensitively; in a skeleton (NFKC) the only characters that fold to
 * an ASCII letter are ASCII ones.
 */
function markerAt(s: string, at: number): boolean {
  const { run, end } = separatorsAt(s, at + 1, 2 * MAX_SEPARATORS + 1);
  if (run.length > 2 * MAX_SEPARATORS && (run.length > 2 * MAX_SEPARATORS + 1 || run[MAX_SEPARATORS] !== 0x2f))
    return false;
  return NAMES.some((name) => nameAt(s, end, name));
}

/** Whether `name` starts at `k` in `s`, up to three separators between any two of its letters. */
function nameAt(s: string, k: number, name: string): boolean {
  for (let i = 0; i < name.length; i++) {
    if (i > 0) {
      const gap = separatorsAt(s, k, MAX_SEPARATORS);
      if (gap.run.length > MAX_SEPARATORS) return false;
      k = gap.end;
    }
    const c = s.charCodeAt(k);
    if ((c >= 0x41 && c <= 0x5a ? c | 0x20 : c) !== name.charCodeAt(i)) return false;
    k++;
  }
  return true;
}

/** Where each `<` that opens a marker is in `s`. */
function markers(s: string): number[] {
  const found: number[] = [];
  for (let at = s.indexOf('<'); at !== -1; at = s.indexOf('<', at + 1)) if (markerAt(s, at)) found.push(at);
  return found;
}

/** Brackets and dashes a reader takes for `<` and `-` that NFKC leaves alone. */
const FOLD: Record<string, string> = {
  '\u2039': '<',
  '\u276e': '<',
  '\u3008': '<',
  '\u2329': '<',
  '\u02c2': '<',
  '\u1438': '<',
  '\u27e8': '<',
  '\u29fc': '<',
  '\u2010': '-',
  '\u2011': '-',
  '\u2012': '-',
  '\u2013': '-',
  '\u2014': '-',
  '\u2015': '-',
  '\u2212': '-',
  '\u2043': '-',
  '\u02d7': '-',
  '\u2e3a': '-',
  '\u2e3b': '-',
  '\ufe58': '-',
};

const FORMAT = /^\p{Cf}$/u;

/** Returns `text` with every harness marker tag escaped (`<` → `&lt;`), look-alikes included. */
export function scrubHarnessMarkers(text: string): string {
  // Plain ASCII text is its own skeleton.
  // eslint-disable-next-line no-control-regex
  if (/^[\x00-\x7f]*$/.test(text)) return escapeAt(text, markers(text));
  const { skeleton, origin } = skeletonOf(text);
  return escapeAt(text, [...new Set(markers(skeleton).map((k) => origin[k]!))]);
}

/**
 * The text as a reader takes it: NFKC, format characters dropped, look-alike brackets and dashes folded (above); and
 * for each of its UTF-16 units, where in `text` the character it came from starts.
 */
export function skeletonOf(text: string): { skeleton: string; origin: number[] } {
  let skeleton = '';
  const origin: number[] = [];
  let i = 0;
  for (const ch of text) {
    const mapped = FORMAT.test(ch) ? '' : (FOLD[ch] ?? ch.normalize('NFKC'));
    for (let k = 0; k < mapped.length; k++) origin.push(i);
    skeleton += mapped;
    i += ch.length;
  }
  return { skeleton, origin };
}

/** `text` with the `<` at each of `positions` (ascending) escaped; a look-alike `<` outside the BMP is one. */
function escapeAt(text: string, positions: number[]): string {
  if (positions.length === 0) return text;
  let out = '';
  let last = 0;
  for (const pos of positions) {
    const len = text.codePointAt(pos)! > 0xffff ? 2 : 1;
    out += text.slice(last, pos) + '&lt;';
    last = pos + len;
  }
  return out + text.slice(last);
}
