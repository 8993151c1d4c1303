import type { Color, Line } from './view.js';

/**
 * Styled lines → terminal text (pure). Each line is cut to the width (a cut line ends in `…`)
 * and control characters in the text are dropped, so an agent's last line can never move the
 * cursor or change the terminal's modes. Styles are SGR codes, reset after each segment.
 */

const SGR_COLOR: Record<Color, number> = { red: 31, green: 32, yellow: 33, cyan: 36 };
// eslint-disable-next-line no-control-regex -- dropping control characters is the point
const CONTROL = /[\u0000-\u001F\u007F-\u009F]/g;

export interface PaintOptions {
  /** Colours, bold and dim (off for NO_COLOR and TERM=dumb). */
  styles: boolean;
}

export function paintLine(line: Line, width: number, opts: PaintOptions): string {
  let room = Math.max(0, width);
  let out = '';
  for (let i = 0; i < line.length && room > 0; i++) {
    const seg = line[i]!;
    let chars = [...seg.text.replace(CONTROL, '')];
    if (chars.length > room || (chars.length === room && hasMoreText(line, i + 1)))
      chars = [...chars.slice(0, room - 1), '…'];
    room -= chars.length;
    const text = chars.join('');
    if (text === '') continue;
    const codes = opts.styles ? sgr(seg) : '';
    out += codes ? `\u001B[${codes}m${text}\u001B[0m` : text;
  }
  return out;
}

export function paintFrame(lines: readonly Line[], width: number, opts: PaintOptions): string[] {
  return lines.map((l) => paintLine(l, width, opts));
}

/** The line's text without styles (what a screen without colour shows; used by tests). */
export function plainLine(line: Line): string {
  return line.map((s) => s.text).join('');
}

function hasMoreText(line: Line, from: number): boolean {
  for (let i = from; i < line.length; i++) if (line[i]!.text.replace(CONTROL, '') !== '') return true;
  return false;
}

function sgr(seg: Line[number]): string {
  const codes: number[] = [];
  if (seg.bold) codes.push(1);
  if (seg.dim) codes.push(2);
  if (seg.color) codes.push(SGR_COLOR[seg.color]);
  return codes.join(';');
}
