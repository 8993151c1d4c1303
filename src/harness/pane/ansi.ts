import { stripVTControlCharacters } from 'node:util';

/** Plain ANSI styling for the pane; every function is the identity when color is off. */
export interface Style {
  readonly enabled: boolean;
  dim(s: string): string;
  bold(s: string): string;
  red(s: string): string;
  green(s: string): string;
  yellow(s: string): string;
  cyan(s: string): string;
  inverse(s: string): string;
}

const wrap = (open: number, close: number) => (s: string) => `\x1b[${open}m${s}\x1b[${close}m`;
const same = (s: string) => s;

export function makeStyle(enabled: boolean): Style {
  if (!enabled) {
    return { enabled, dim: same, bold: same, red: same, green: same, yellow: same, cyan: same, inverse: same };
  }
  return {
    enabled,
    dim: wrap(2, 22),
    bold: wrap(1, 22),
    red: wrap(31, 39),
    green: wrap(32, 39),
    yellow: wrap(33, 39),
    cyan: wrap(36, 39),
    inverse: wrap(7, 27),
  };
}

/** Color only on a TTY and only when `NO_COLOR` is not set to a non-empty value (no-color.org). */
export function colorEnabled(output: { isTTY?: boolean }, env: NodeJS.ProcessEnv): boolean {
  return output.isTTY === true && !(env.NO_COLOR !== undefined && env.NO_COLOR !== '');
}

/**
 * Text from a model or a tool made safe to print: escape sequences and control characters
 * removed (they could move the cursor and garble the pane), tabs as spaces, CRLF as LF.
 */
export function sanitize(text: string): string {
  return (
    stripVTControlCharacters(text)
      .replace(/\r\n?/g, '\n')
      .replace(/\t/g, '    ')
      // eslint-disable-next-line no-control-regex -- removing control characters is the point
      .replace(/[\x00-\x09\x0b-\x1f\x7f]/g, '')
  );
}

// East Asian wide and emoji code points take two columns; combining marks, zero-width
// characters and variation selectors take none.
const WIDE: readonly [number, number][] = [
  [0x1100, 0x115f],
  [0x2e80, 0x303e],
  [0x3041, 0x33ff],
  [0x3400, 0x4dbf],
  [0x4e00, 0x9fff],
  [0xa000, 0xa4cf],
  [0xac00, 0xd7a3],
  [0xf900, 0xfaff],
  [0xfe30, 0xfe4f],
  [0xff00, 0xff60],
  [0xffe0, 0xffe6],
  [0x1f300, 0x1f64f],
  [0x1f900, 0x1f9ff],
  [0x20000, 0x3fffd],
];
const ZERO: readonly [number, number][] = [
  [0x0300, 0x036f],
  [0x200b, 0x200f],
  [0xfe00, 0xfe0f],
];
const within = (cp: number, ranges: readonly [number, number][]) => ranges.some(([a, b]) => cp >= a && cp <= b);

/** Columns a string takes on screen, ignoring ANSI codes. */
export function displayWidth(s: string): number {
  let w = 0;
  for (const ch of stripVTControlCharacters(s)) {
    const cp = ch.codePointAt(0) ?? 0;
    if (within(cp, ZERO)) continue;
    w += within(cp, WIDE) ? 2 : 1;
  }
  return w;
}

/** Cuts plain text to `max` columns, ending with `…` when cut. */
export function truncate(s: string, max: number): string {
  if (displayWidth(s) <= max) return s;
  if (max <= 1) return max === 1 ? '…' : '';
  let out = '';
  let w = 0;
  for (const ch of s) {
    const cw = displayWidth(ch);
    if (w + cw > max - 1) break;
    out += ch;
    w += cw;
  }
  return out + '…';
}

/** `1.2 KB`, `830 B`, `3.4 MB`. */
export function formatBytes(n: number): string {
  if (n < 1024) return `${n} B`;
  if (n < 1024 * 1024) return `${(n / 1024).toFixed(1)} KB`;
  return `${(n / (1024 * 1024)).toFixed(1)} MB`;
}
