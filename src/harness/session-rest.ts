import type { RecordKeeper } from './record-keeper.js';
import type { WorkSlotPort } from './session-deps.js';

/**
 * When an agent works and when it rests (§5.2): work takes a running slot first, in line
 * when none is free; at rest the slot goes back and the idle timer runs, ending a persistent
 * agent idle for `limits.idle_timeout_secs`. One-shot agents keep their slot and have no timer.
 */
export class SessionRest {
  private idleTimer: NodeJS.Timeout | undefined;
  private slotWait: AbortController | null = null;

  constructor(
    private readonly d: {
      slot: WorkSlotPort | undefined;
      oneshot: boolean;
      idleTimeoutSecs: number;
      keeper: RecordKeeper;
      /** The agent is ending: no slot is kept, no timer armed. */
      ending: () => boolean;
      /** Shown while the agent waits in line for a slot. */
      waiting: (line: string) => void;
      /** The idle timer ran out. */
      timedOut: () => void;
    },
  ) {}

  /** Work is under way: the idle timer stops. */
  working(): void {
    clearTimeout(this.idleTimer);
  }

  /** Work arrived: take a running slot first, in line when none is free. False when the agent ends meanwhile. */
  async takeSlot(): Promise<boolean> {
    const { slot, keeper } = this.d;
    if (!slot || slot.held()) return true;
    clearTimeout(this.idleTimer);
    this.slotWait = new AbortController();
    try {
      const ok = await slot.take(this.slotWait.signal, (line) => {
        keeper.set({ status: 'queued', lastLine: line });
        this.d.waiting(line);
      });
      if (ok) keeper.set({ slot: slot.index });
      return ok && !this.d.ending();
    } finally {
      this.slotWait = null;
    }
  }

  /** No work: the slot goes back (§5.2) and the idle timer runs. */
  rest(): void {
    const { slot, oneshot, keeper } = this.d;
    if (!oneshot && slot?.held()) {
      slot.give();
      if (!this.d.ending()) keeper.set({ slot: null });
    }
    this.armIdleTimer();
  }

  /** An interactive agent opened with no task: it gives its slot back until work arrives. */
  idleWithoutTask(): void {
    this.d.slot?.give();
    this.d.keeper.set({ status: 'idle', slot: null });
  }

  /** The agent ends: no timer, and no more waiting in line. */
  stop(): void {
    clearTimeout(this.idleTimer);
    this.slotWait?.abort();
  }

  private armIdleTimer(): void {
    clearTimeout(this.idleTimer);
    const secs = this.d.idleTimeoutSecs;
    if (secs > 0 && !this.d.ending() && !this.d.oneshot) {
      this.idleTimer = setTimeout(() => this.d.timedOut(), secs * 1000);
      this.idleTimer.unref();
    }
  }
}
