import type { Snapshot } from './rows.js';

/**
 * Tells a person who is not looking at the dashboard that something needs them (design §2
 * "Attention"): the fleet session's tmux status line shows how many agents need a person
 * (`⚑ 2 need you`), and the terminal bell rings when a new one appears. The count is a
 * session option (`@flotilla_needs`) the status line reads, so tmux redraws it at once and
 * nothing polls. The bell is one BEL written to the dashboard's own terminal: tmux flags the
 * dashboard's window in the status line and passes the bell on to the person's terminal
 * (tmux's default `bell-action any`), whichever window they are in.
 */

/** What the signal needs of tmux (client.ts `Tmux`). */
export interface SignalTmux {
  exec(args: readonly string[]): Promise<{ code: number; stdout: string; stderr: string }>;
}

export interface SignalOptions {
  /** The fleet session (`=name` is added); null: no status line to keep (no tmux). */
  session: string | null;
  tmux: SignalTmux | null;
  /** Rings the bell (writes BEL to the dashboard's terminal). */
  ring: (() => void) | null;
}

/** The session option the status line reads. */
export const NEEDS_OPTION = '@flotilla_needs';

/** The text the status line shows for `n` agents that need a person ('' for none). */
export function needsText(n: number): string {
  return n === 0 ? '' : `⚑ ${n} need${n === 1 ? 's' : ''} you`;
}

/** The status-right the fleet session gets: the count (when there is one), then what was there. */
export function statusRightWith(previous: string): string {
  return `#{?${NEEDS_OPTION},#[reverse]#{${NEEDS_OPTION}}#[noreverse] ,}${previous}`;
}

export class AttentionSignal {
  /** Stamps of needs already announced (attention.ts `Need.stamp`); null until the first snapshot. */
  private known: Set<string> | null = null;
  private shown: string | null = null;
  private statusSet = false;
  private chain: Promise<void> = Promise.resolve();

  constructor(private readonly opts: SignalOptions) {}

  /**
   * Called with each new snapshot. The needs present when the dashboard starts do not ring: only ones that appear while
   * it runs.
   */
  update(snap: Snapshot): void {
    const stamps = new Set(snap.rows.flatMap((r) => (r.need ? [r.need.stamp] : [])));
    if (this.known && this.opts.ring && [...stamps].some((s) => !this.known!.has(s))) this.opts.ring();
    this.known = stamps;
    const text = needsText(snap.needs);
    if (text === this.shown) return;
    this.shown = text;
    // tmux calls run one after another, so the last count written is the one that stays.
    this.chain = this.chain.then(() => this.show(text)).catch(() => undefined);
  }

  /** The dashboard ends: a count nobody keeps current any more leaves the status line. */
  close(): Promise<void> {
    const { tmux, session } = this.opts;
    if (tmux && session && this.shown)
      this.chain = this.chain
        .then(async () => {
          await tmux.exec(['set-option', '-u', '-t', `=${session}:`, NEEDS_OPTION]);
        })
        .catch(() => undefined);
    return this.chain;
  }

  /** Resolves when the tmux calls made so far are done (tests, and the end of the dashboard). */
  settled(): Promise<void> {
    return this.chain;
  }

  private async show(text: string): Promise<void> {
    const { tmux, session } = this.opts;
    if (!tmux || !session) return;
    // `=name:` — an exact session name; the option commands do not take a bare `=name`.
    const target = `=${session}:`;
    if (!this.statusSet) {
      this.statusSet = true;
      await this.addToStatusLine(tmux, target);
    }
    await tmux.exec(['set-option', '-t', target, NEEDS_OPTION, text]);
  }

  /** Puts the count in front of the session's status-right once (a second dashboard finds it there). */
  private async addToStatusLine(tmux: SignalTmux, target: string): Promise<void> {
    const own = await tmux.exec(['show-options', '-v', '-t', target, 'status-right']);
    if (own.code !== 0) return;
    if (own.stdout.includes(NEEDS_OPTION)) return;
    const base = own.stdout.trim()
      ? own.stdout.replace(/\n$/, '')
      : (await tmux.exec(['show-options', '-gv', 'status-right'])).stdout.replace(/\n$/, '');
    await tmux.exec(['set-option', '-t', target, 'status-right', statusRightWith(base)]);
    const length = Number((await tmux.exec(['show-options', '-gv', 'status-right-length'])).stdout.trim()) || 40;
    await tmux.exec(['set-option', '-t', target, 'status-right-length', String(length + 16)]);
  }
}
