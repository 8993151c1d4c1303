import type { WatchActions } from './actions.js';
import { KeyDecoder, type KeyEvent } from './key-decoder.js';
import { initialUi, reduceInput, type Effect, type UiState } from './keys.js';
import { paintFrame } from './paint.js';
import type { Snapshot } from './rows.js';
import { FrameScreen } from './screen.js';
import { dashboardView, frameWidth, type Line, type Segment } from './view.js';

/**
 * The dashboard's loop: the terminal in raw mode, keys through `reduceInput`, effects through
 * `actions`, and a frame drawn when the fleet, a key or the size changes. Draws are coalesced
 * (a burst of keys and file events draws once) and a frame the same as the one on screen is
 * never drawn again, so a quiet fleet writes nothing. It ends on q or ctrl-c, on `stop()`
 * (signals), and when the terminal goes away (EIO, end of input), giving the terminal back.
 */

/** The feed as the loop uses it (FleetFeed). */
export interface DashboardFeed {
  readonly current: Snapshot;
  subscribe(fn: (s: Snapshot) => void): () => void;
  refresh(): void;
}

/** The terminal's two ends, as process.stdin / process.stdout provide them. */
export interface DashboardInput {
  setRawMode?(on: boolean): unknown;
  setEncoding(enc: BufferEncoding): unknown;
  on(event: 'data', fn: (chunk: string) => void): unknown;
  on(event: 'end' | 'error', fn: () => void): unknown;
  off(event: 'data', fn: (chunk: string) => void): unknown;
  resume(): unknown;
  pause(): unknown;
  unref?(): unknown;
}

export interface DashboardOutput {
  readonly columns?: number | undefined;
  readonly rows?: number | undefined;
  write(text: string): unknown;
  on(event: 'resize' | 'error', fn: () => void): unknown;
  off(event: 'resize', fn: () => void): unknown;
}

export interface DashboardOptions {
  feed: DashboardFeed;
  actions: WatchActions;
  title: string;
  input: DashboardInput;
  output: DashboardOutput;
  /** Colours and bold/dim (default on). */
  styles?: boolean;
  /** Called after each frame written (FLOTILLA_WATCH_STATS). */
  onDraw?: () => void;
  /** How long a lone ESC waits for the rest of a sequence before it counts as Escape (default 50 ms). */
  escapeMs?: number;
  /** How long a line of feedback stays (default 5 s). */
  flashMs?: number;
  /** Told of each snapshot shown (signal.ts: the tmux status count and the bell). */
  onSnapshot?: (s: Snapshot) => void;
}

export class Dashboard {
  private ui: UiState = initialUi;
  private snap: Snapshot;
  private top = 0;
  private readonly screen: FrameScreen;
  private readonly decoder = new KeyDecoder();
  private drawQueued = false;
  private clearNext = true;
  private escTimer: NodeJS.Timeout | null = null;
  private flashTimer: NodeJS.Timeout | null = null;
  private flashShown = '';
  private unsubscribe: (() => void) | null = null;
  private stopped = false;
  private notice: readonly string[] = [];
  private finish: () => void = () => undefined;
  readonly done: Promise<void>;

  constructor(private readonly opts: DashboardOptions) {
    this.snap = opts.feed.current;
    this.screen = new FrameScreen(opts.output);
    this.done = new Promise((resolve) => {
      this.finish = resolve;
    });
  }

  /** Takes the terminal and draws the first frame at once; resolves `done` when the dashboard ends. */
  start(): Promise<void> {
    const { input, output, feed } = this.opts;
    output.on('error', this.stop);
    output.on('resize', this.onResize);
    input.on('error', this.stop);
    input.on('end', this.stop);
    input.setEncoding('utf8');
    input.setRawMode?.(true);
    input.on('data', this.onData);
    input.resume();
    this.screen.open();
    this.unsubscribe = feed.subscribe((s) => {
      this.snap = s;
      this.opts.onSnapshot?.(s);
      this.queueDraw();
    });
    this.opts.onSnapshot?.(this.snap);
    this.draw();
    return this.done;
  }

  /** Ends the dashboard and gives the terminal back (safe to call more than once, and from a signal). */
  readonly stop = (): void => {
    if (this.stopped) return;
    this.stopped = true;
    const { input, output } = this.opts;
    this.unsubscribe?.();
    if (this.escTimer) clearTimeout(this.escTimer);
    if (this.flashTimer) clearTimeout(this.flashTimer);
    input.off('data', this.onData);
    output.off('resize', this.onResize);
    try {
      input.setRawMode?.(false);
      this.screen.close();
    } catch {
      // The terminal is gone (its window closed): nothing left to restore.
    }
    input.pause();
    input.unref?.();
    this.finish();
  };

  private readonly onResize = (): void => {
    this.clearNext = true;
    this.queueDraw();
  };

  private readonly onData = (chunk: string): void => {
    if (this.escTimer) clearTimeout(this.escTimer);
    this.escTimer = null;
    this.keys(this.decoder.push(chunk));
    if (this.decoder.holding && !this.stopped) {
      this.escTimer = setTimeout(() => {
        this.escTimer = null;
        this.keys(this.decoder.flush());
      }, this.opts.escapeMs ?? 50);
    }
  };

  private keys(events: readonly KeyEvent[]): void {
    for (const { input, key } of events) {
      if (this.stopped) return;
      // ctrl-c always quits, in every mode (a terminal program's promise).
      if (key.ctrl && input === 'c') {
        this.stop();
        return;
      }
      const r = reduceInput(this.ui, input, key, this.opts.feed.current);
      this.ui = r.ui;
      for (const effect of r.effects) this.run(effect);
    }
    this.queueDraw();
  }

  private run(effect: Effect): void {
    if (effect.kind === 'quit') {
      this.stop();
      return;
    }
    const { actions, feed } = this.opts;
    const job =
      effect.kind === 'attach'
        ? actions.attach(effect.row)
        : effect.kind === 'send'
          ? actions.send(effect.row, effect.text)
          : effect.kind === 'cancel'
            ? actions.cancel(effect.row)
            : effect.kind === 'approve'
              ? actions.approve(effect.approval)
              : effect.kind === 'seen'
                ? actions.seen(effect.row)
                : actions.deny(effect.approval, effect.reason);
    void job.then((flash) => {
      if (this.stopped) return;
      if (flash) this.ui = { ...this.ui, flash };
      // Act on the result now rather than at the next file event.
      feed.refresh();
      this.queueDraw();
    });
  }

  /**
   * Lines shown above the message line until replaced: a config file or a definition that
   * no longer loads (the whole message, wrapped, never cut), or what a reload changed.
   */
  setNotice(lines: readonly string[]): void {
    this.notice = lines;
    this.queueDraw();
  }

  /** One draw for everything that happened in this turn of the event loop. */
  private queueDraw(): void {
    if (this.drawQueued || this.stopped) return;
    this.drawQueued = true;
    setImmediate(() => {
      this.drawQueued = false;
      this.draw();
    });
  }

  /** A line of feedback goes away by itself after `flashMs`, so an old answer is never read as news. */
  private ageFlash(): void {
    const flash = this.ui.flash;
    if (flash === this.flashShown) return;
    this.flashShown = flash;
    if (this.flashTimer) clearTimeout(this.flashTimer);
    this.flashTimer = null;
    if (!flash) return;
    this.flashTimer = setTimeout(() => {
      this.flashTimer = null;
      if (this.ui.flash === flash) {
        this.ui = { ...this.ui, flash: '' };
        this.queueDraw();
      }
    }, this.opts.flashMs ?? 5_000);
    this.flashTimer.unref?.();
  }

  private draw(): void {
    if (this.stopped) return;
    this.ageFlash();
    const { output } = this.opts;
    const size = { columns: output.columns || 80, rows: output.rows || 24 };
    const width = frameWidth(size.columns);
    const notice = wrapNotice(this.notice, width - 1, Math.max(0, size.rows - 8));
    const frame = dashboardView(
      this.snap,
      this.ui,
      { ...size, rows: size.rows - notice.length },
      this.opts.title,
      this.top,
    );
    this.top = frame.top;
    // Above the message line and the key help, the frame's last two lines.
    if (notice.length) frame.lines.splice(frame.lines.length - 2, 0, ...notice);
    const lines = paintFrame(frame.lines, width, { styles: this.opts.styles ?? true });
    const clear = this.clearNext;
    this.clearNext = false;
    if (this.screen.show(lines, clear)) this.opts.onDraw?.();
  }
}

/** Notice lines wrapped to the width (at most `max` lines); `✗ ` lines in red, others dim. */
export function wrapNotice(notice: readonly string[], width: number, max: number): Line[] {
  const out: Line[] = [];
  for (const text of notice) {
    const style: Omit<Segment, 'text'> = text.startsWith('✗ ') ? { color: 'red' } : { dim: true };
    for (let i = 0; i < text.length; i += Math.max(1, width))
      out.push([{ text: text.slice(i, i + Math.max(1, width)), ...style }]);
  }
  return out.slice(0, max);
}
