/**
 * The dashboard's terminal: after a resize it redraws whole, with nothing of the old frame
 * left. Each frame is drawn from the top-left corner, every line erased before it
 * is written and everything below the frame erased, on the alternate screen with line wrap
 * and the cursor off (a line too long for a narrower window is cut, never wrapped onto the
 * next). A frame identical to the one on screen is not written again, unless the screen was
 * cleared (a resize): then it is drawn on a cleared screen.
 */

const ESC = '\u001B[';
const HOME = `${ESC}H`;
const ERASE_LINE = `${ESC}2K`;
const ERASE_BELOW = `${ESC}J`;
const ERASE_SCREEN = `${ESC}2J`;
const OPEN = `${ESC}?1049h${ESC}?7l${ESC}?25l${ERASE_SCREEN}${HOME}`;
const CLOSE = `${ESC}?25h${ESC}?7h${ESC}?1049l`;

/** What the screen needs of a terminal: somewhere to write and its height. */
export interface ScreenOutput {
  write(text: string): unknown;
  readonly rows?: number | undefined;
}

export class FrameScreen {
  /** The frame on screen, as its lines joined (null: nothing drawn yet, or cleared). */
  private shown: string | null = null;
  private opened = false;

  constructor(private readonly out: ScreenOutput) {}

  /** Takes the terminal: alternate screen, no line wrap, no cursor, cleared. */
  open(): void {
    if (this.opened) return;
    this.opened = true;
    this.out.write(OPEN);
  }

  /** Gives the terminal back as it was. */
  close(): void {
    if (!this.opened) return;
    this.opened = false;
    this.out.write(CLOSE);
  }

  /**
   * Puts `lines` on screen. With `clear` the screen is wiped first (after a resize the
   * terminal may have re-laid the old frame). Returns false when nothing was written: the
   * same frame is already on screen.
   */
  show(lines: readonly string[], clear = false): boolean {
    if (!this.opened) return false;
    const rows = this.out.rows || 24;
    const visible = lines.slice(0, rows);
    const key = visible.join('\n');
    if (!clear && key === this.shown) return false;
    this.shown = key;
    const body = visible.map((l) => ERASE_LINE + l).join('\r\n');
    // Below the frame: erased from the start of the next line (erasing from the end of a full-width last line would
    // take its last character).
    const below = visible.length === 0 ? ERASE_BELOW : visible.length < rows ? `\r\n${ERASE_BELOW}` : '';
    this.out.write((clear ? ERASE_SCREEN : '') + HOME + body + below);
    return true;
  }
}
