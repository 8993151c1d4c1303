import { clearScreenDown, cursorTo, moveCursor, type Interface } from 'node:readline';
import { redact } from '../../secrets/redact.js';
import { displayWidth } from './ansi.js';
import type { PaneOutput } from './format-event.js';

/**
 * Streamed text longer than this many rows is committed up to a word break, so a redraw never scrolls off a small pane.
 */
const MAX_LIVE_ROWS = 3;

/**
 * The terminal writer of the pane. Finished lines go to the normal scrollback (no alternate
 * screen), and the bottom of the pane is a redrawn "live area":
 *
 *   [the model's current, unfinished line of text]
 *   [status line]
 *   › [what the person is typing]
 *
 * Every change erases the live area, appends the new finished lines, and draws the area again
 * with readline's own line, so output arriving while a person types never garbles the input.
 */
export class PaneScreen {
  private rl: Interface | null = null;
  private partial = '';
  private prompt = '› ';
  private status: (width: number) => string = () => '';
  /** `aside`: a line of the pane itself (the person's input, a chat reply), not of the model's stream. */
  private pending: (PaneOutput | { kind: 'aside'; text: string })[] = [];
  private scheduled = false;
  /** Rows of the live area above the prompt line, when the area is on screen. */
  private drawnAbove = -1;
  /** Without readline (before start, after the end) streamed text is written as it comes. */
  private midLine = false;

  constructor(private readonly out: NodeJS.WriteStream) {}

  get columns(): number {
    return this.out.columns > 0 ? this.out.columns : 80;
  }

  /** Starts drawing the live area around this readline interface. */
  attach(rl: Interface): void {
    this.rl = rl;
    this.flush();
  }

  /** Stops drawing the prompt: erases the live area and leaves the unfinished text as a line. */
  detach(): void {
    this.flushOutputs();
    this.erase();
    this.rl = null;
    if (this.partial !== '') this.writeLine(this.partial);
    this.partial = '';
  }

  setStatus(render: (width: number) => string): void {
    this.status = render;
    this.schedule();
  }

  setPrompt(prompt: string): void {
    if (prompt === this.prompt) return;
    this.prompt = prompt;
    this.flush();
  }

  /** Queues output; it is drawn once per tick so a burst of text deltas costs one redraw. */
  push(outputs: readonly PaneOutput[]): void {
    if (outputs.length === 0) return;
    this.pending.push(...outputs);
    this.schedule();
  }

  /**
   * Writes lines now (chat replies, notices of the pane itself). They go above the model's
   * unfinished line, which stays in the live area and goes on where it was: a chat command typed
   * while text streams must not split the streamed line in two.
   */
  lines(lines: readonly string[]): void {
    this.pending.push(...lines.map((text) => ({ kind: 'aside' as const, text })));
    this.flush();
  }

  /**
   * Call first thing in readline's 'line' handler: readline has already moved below the
   * submitted input, so the live area sits higher than usual. Keeps the typed line in the
   * scrollback as a record of what the person said.
   */
  commitInput(line: string): void {
    if (this.rl !== null && this.drawnAbove >= 0) {
      const inputRows = this.rowsOf(this.prompt + line);
      cursorTo(this.out, 0);
      moveCursor(this.out, 0, -(this.drawnAbove + inputRows));
      clearScreenDown(this.out);
      this.drawnAbove = -1;
    }
    if (line.trim() !== '') this.pending.push({ kind: 'aside', text: this.prompt + line });
    this.flush();
  }

  /** Erases the live area, writes what is pending, draws the area again. */
  flush(): void {
    this.erase();
    this.flushOutputs();
    this.draw();
  }

  private schedule(): void {
    if (this.scheduled) return;
    this.scheduled = true;
    setImmediate(() => {
      this.scheduled = false;
      this.flush();
    });
  }

  private flushOutputs(): void {
    const outputs = this.pending;
    this.pending = [];
    for (const o of outputs) {
      if (o.kind === 'text') this.addText(o.text);
      else if (o.kind === 'aside' && this.rl !== null) this.writeLine(o.text);
      else {
        this.endText();
        if (o.kind !== 'break') this.writeLine(o.text);
      }
    }
    this.capPartial();
  }

  private addText(text: string): void {
    if (this.rl === null) {
      this.write(text.replace(/\n/g, '\r\n'));
      this.midLine = !text.endsWith('\n');
      return;
    }
    const parts = (this.partial + text).split('\n');
    this.partial = parts.pop() ?? '';
    for (const p of parts) this.writeLine(p);
  }

  private endText(): void {
    if (this.partial !== '') this.writeLine(this.partial);
    this.partial = '';
    if (this.midLine) this.write('\r\n');
    this.midLine = false;
  }

  private writeLine(text: string): void {
    this.write(text + '\r\n');
  }

  private capPartial(): void {
    const cols = this.columns;
    while (displayWidth(this.partial) > cols * MAX_LIVE_ROWS) {
      const head = [...this.partial].slice(0, cols).join('');
      const space = head.lastIndexOf(' ');
      const cut = space > cols / 2 ? space + 1 : head.length;
      this.writeLine(this.partial.slice(0, cut).trimEnd());
      this.partial = this.partial.slice(cut);
    }
  }

  private erase(): void {
    if (this.rl === null || this.drawnAbove < 0) return;
    const row = this.rl.getCursorPos().rows;
    cursorTo(this.out, 0);
    moveCursor(this.out, 0, -(this.drawnAbove + row));
    clearScreenDown(this.out);
    this.drawnAbove = -1;
  }

  private draw(): void {
    const rl = this.rl;
    if (rl === null) return;
    let rows = 0;
    if (this.partial !== '') {
      this.write(this.partial + '\r\n');
      rows += this.rowsOf(this.partial);
    }
    const status = this.status(this.columns);
    if (status !== '') {
      this.write(status + '\r\n');
      rows += 1;
    }
    this.drawnAbove = rows;
    rl.setPrompt(this.prompt);
    // readline moves up by the rows of its previous drawing before redrawing; this screen has
    // already erased that, so start readline from the current row.
    (rl as unknown as { prevRows?: number }).prevRows = 0;
    rl.prompt(true);
  }

  /** Every byte the pane writes passes here: secrets this process holds never reach the terminal (§11). */
  private write(text: string): void {
    this.out.write(redact(text));
  }

  private rowsOf(text: string): number {
    return Math.max(1, Math.ceil(displayWidth(text) / this.columns));
  }
}
