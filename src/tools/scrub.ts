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
// optional `/`, then a marker name with up to three separators between *any* two of its
// letters: `< inbox_message`, `<in-box-message`, `<i n b o x - m e s s a g e` all read as
// the tag to a model, so all are escaped.
const SEP = '[^\\p{L}\\p{N}>]{0,3}';
// Made on first use: building its Unicode classes was ~5 ms of every start that loads the tools
// and runs none (`flotilla mcp`'s, before its client's first turn, §14).
let markerRe: RegExp | undefined;
const markerPattern = (): RegExp =>
  (markerRe ??= new RegExp(
    `<(?=${SEP}/?${SEP}(?:${MARKER_NAMES.map((n) => [...n.replace(/-/g, '')].join(SEP)).join('|')}))`,
    'giu',
  ));

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
  // Fast path: plain ASCII text can only hold the plain spellings, each opened by a `<`; with
  // none, the marker pattern is never run (its first runs compile it twice: ~0.1 s each on a busy machine).
  // eslint-disable-next-line no-control-regex
  if (/^[\x00-\x7f]*$/.test(text)) return text.includes('<') ? text.replace(markerPattern(), '&lt;') : text;
  let skeleton = '';
  const origin: number[] = [];
  let i = 0;
  for (const ch of text) {
    const mapped = FORMAT.test(ch) ? '' : (FOLD[ch] ?? ch.normalize('NFKC'));
    for (let k = 0; k < mapped.length; k++) origin.push(i);
    skeleton += mapped;
    i += ch.length;
  }
  const at = new Set<number>();
  for (const m of skeleton.matchAll(markerPattern())) at.add(origin[m.index]!);
  if (at.size === 0) return text;
  let out = '';
  let last = 0;
  for (const pos of [...at].sort((a, b) => a - b)) {
    const len = text.codePointAt(pos)! > 0xffff ? 2 : 1;
    out += text.slice(last, pos) + '&lt;';
    last = pos + len;
  }
  return out + text.slice(last);
}
