import { describe, expect, it } from 'vitest';
import { scrubHarnessMarkers, skeletonOf } from '../../src/tools/scrub.js';

/**
 * The marker scan (src/tools/scrub.ts) is matched by hand; what it must match is this regular expression over the
 * skeleton, the definition it replaced (too slow to compile in every agent: ~60 ms of CPU). The reference below runs
 * the expression over the same skeleton (skeletonOf); random texts made of what matters (separators, `/`, `>`, the
 * names' letters in both cases, digits, look-alikes, format characters, astral characters) must come out identical.
 */
const SEP = '[^\\p{L}\\p{N}>]{0,3}';
const NAMES = ['inbox-message', 'agent-memory', 'system-reminder', 'parent-context'];
const MARKER = new RegExp(
  `<(?=${SEP}/?${SEP}(?:${NAMES.map((n) => [...n.replace(/-/g, '')].join(SEP)).join('|')}))`,
  'giu',
);

function reference(text: string): string {
  const { skeleton, origin } = skeletonOf(text);
  const at = new Set<number>();
  for (const m of skeleton.matchAll(MARKER)) at.add(origin[m.index]!);
  let out = '';
  let last = 0;
  for (const pos of [...at].sort((a, b) => a - b)) {
    out += text.slice(last, pos) + '&lt;';
    last = pos + (text.codePointAt(pos)! > 0xffff ? 2 : 1);
  }
  return out + text.slice(last);
}

/** A small deterministic generator (mulberry32), so a failure names a text that can be run again. */
function random(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const LETTERS = [...new Set(NAMES.join('').replace(/-/g, ''))];
const PIECES = [
  '<',
  '<',
  '/',
  '>',
  ' ',
  '-',
  '_',
  '.',
  '\t',
  '7',
  'x',
  'é',
  '\u200b', // zero-width space: dropped from the skeleton
  '\u00ad', // soft hyphen: dropped
  '\uff1c', // fullwidth <
  '\u2039', // single angle quotation: folded to <
  '\u2014', // em dash: folded to -
  '\uff49', // fullwidth i
  '\u017f', // long s: s in NFKC
  '\u212a', // Kelvin sign: K in NFKC
  '\u0131', // dotless i: a letter, not i
  '\u0130', // I with a dot: a letter, not i
  '😀', // astral, a separator
  '\u{1d422}', // mathematical bold i: i in NFKC
  '\u{1d7ce}', // mathematical bold 0: a digit
  ...LETTERS,
  ...LETTERS.map((l) => l.toUpperCase()),
  ...NAMES,
  ...NAMES.map((n) => n.toUpperCase()),
];

describe('the marker scan matches the expression it replaced', () => {
  it('on 20,000 random texts of separators, names, letters and look-alikes', () => {
    const next = random(20261201);
    let escaped = 0;
    for (let n = 0; n < 20_000; n++) {
      const parts: string[] = [];
      const len = Math.floor(next() * 24);
      for (let k = 0; k < len; k++) parts.push(PIECES[Math.floor(next() * PIECES.length)]!);
      const text = parts.join('');
      const want = reference(text);
      if (scrubHarnessMarkers(text) !== want)
        expect({ text, got: scrubHarnessMarkers(text) }).toEqual({ text, got: want });
      if (want !== text) escaped++;
    }
    // The texts exercised both sides: many with a marker escaped, many without.
    expect(escaped).toBeGreaterThan(1_000);
    expect(escaped).toBeLessThan(18_000);
  });

  it('on the edges of each rule: six separators, seven with the slash fourth, four between letters', () => {
    const cases = [
      '<      inbox-message',
      '<   /   inbox-message',
      '<  /    inbox-message',
      '<    /  inbox-message',
      '<///////inbox-message',
      '<i   n   b   o   x   m   e   s   s   a   g   e',
      '<i    nbox-message',
      '<>inbox-message',
      '<<inbox-message',
      '<inbox\u200b-message',
      '<\u{1d422}nbox-message',
      '<😀😀😀/😀😀😀inbox-message',
      '<😀😀😀😀/😀😀inbox-message',
      '<Inbox-Message>',
      '<\u0131nbox-message',
      '<inbox-message',
    ];
    for (const text of cases) expect([text, scrubHarnessMarkers(text)]).toEqual([text, reference(text)]);
  });
});
