import { EventEmitter } from 'node:events';

/**
 * The dashboard's terminal (issue 14: after a resize it redraws whole, with nothing of the
 * old frame left). Ink draws a frame relative to the one before (cursor up as many lines as
 * that frame had, erase, write); once a resize has re-wrapped or cut the old frame, those
 * moves miss and parts of it stay on screen. And when only the height changes Ink's output
 * is the same, so it writes nothing. Ink therefore writes through this screen instead of
 * stdout: each frame is drawn from the top-left corner, every line erased before it is
 * written and everything below the frame erased, on the alternate screen with line wrap off
 * (a line too long for a narrower window is cut, never wrapped onto the next). On a resize
 * the last frame is drawn again at once on a cleared screen, then Ink and the dashboard hear
 * of the new size and draw the frame that fits.
 */

const ESC = '\u001B[';
const HOME = `${ESC}H`;
const ERASE_LINE = `${ESC}2K`;
const ERASE_BELOW = `${ESC}J`;
const ERASE_SCREEN = `${ESC}2J`;
const OPEN = `${ESC}?1049h${ESC}?7l${ERASE_SCREEN}${HOME}`;
const CLOSE = `${ESC}?7h${ESC}?1049l`;

/** The moves Ink puts before a frame to replace the last one: erase line, cursor up/left, clear, home. */
// eslint-disable-next-line no-control-regex -- matching escape sequences is the point
const LEADING_MOVES = /^(?:\u001B\[(?:2K|\d*A|G|2J|3J|H))+/;
/** Writes that are only mode switches (cursor shown/hidden, synchronized output): not frames. */
// eslint-disable-next-line no-control-regex -- matching escape sequences is the point
const MODES_ONLY = /^(?:\u001B\[\?[\d;]*[hl])+$/;

type WriteCallback = (err?: Error | null) => void;

export class FrameScreen extends EventEmitter {
  /** The frame on screen, as Ink wrote it (without its moves). */
  private frame = '';
  private opened = false;

  constructor(private readonly out: NodeJS.WriteStream) {
    super();
  }

  get columns(): number {
    return this.out.columns;
  }

  get rows(): number {
    return this.out.rows;
  }

  get isTTY(): boolean {
    return this.out.isTTY;
  }

  // Ink checks these before its last write at exit.
  get writable(): boolean {
    return this.out.writable;
  }

  get destroyed(): boolean {
    return this.out.destroyed;
  }

  get writableEnded(): boolean {
    return this.out.writableEnded;
  }

  get writableLength(): number {
    return this.out.writableLength;
  }

  /** Takes the terminal: alternate screen, no line wrap, cleared. */
  open(): void {
    if (this.opened) return;
    this.opened = true;
    this.out.on('resize', this.onResize);
    this.out.write(OPEN);
  }

  /** Gives the terminal back as it was. */
  close(): void {
    if (!this.opened) return;
    this.opened = false;
    this.out.off('resize', this.onResize);
    this.out.write(CLOSE);
  }

  write(data: string | Uint8Array, encoding?: BufferEncoding | WriteCallback, cb?: WriteCallback): boolean {
    const done = typeof encoding === 'function' ? encoding : cb;
    const text = typeof data === 'string' ? data : Buffer.from(data).toString('utf8');
    if (!this.opened || text === '' || MODES_ONLY.test(text)) return done ? this.out.write(text, done) : this.out.write(text);
    this.frame = text.slice(LEADING_MOVES.exec(text)?.[0].length ?? 0);
    const drawn = this.draw(false);
    return done ? this.out.write(drawn, done) : this.out.write(drawn);
  }

  private readonly onResize = (): void => {
    this.out.write(this.draw(true));
    this.emit('resize');
  };

  /** The escape text that puts the frame on screen from the top-left corner and erases the rest. */
  private draw(clear: boolean): string {
    const rows = this.out.rows || 24;
    const lines = this.frame.replace(/\n$/, '').split('\n').slice(0, rows);
    const body = this.frame === '' ? '' : lines.map((l) => ERASE_LINE + l).join('\r\n');
    // Below the frame: erased from the start of the next line (erasing from the end of a full-width last line would take its last character).
    const below = this.frame === '' ? ERASE_BELOW : lines.length < rows ? `\r\n${ERASE_BELOW}` : '';
    return (clear ? ERASE_SCREEN : '') + HOME + body + below;
  }
}
