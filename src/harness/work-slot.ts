import type { CapsBus } from '../fleet/caps-port.js';
import { inTurn } from '../fleet/slot-queue.js';
import { acquireSlot, countHeld, type SlotHold } from '../fleet/slots.js';
import type { Layout } from '../layout/layout.js';

/**
 * A harness's running slot, held only while it works (§5.2: slots count work, not
 * windows). The slot handed over at spawn is held for the first task; an idle agent gives it
 * back, and takes one again — in line when none is free — before new work (a typed line, a
 * message, a task) runs. `release()` gives it up for good when the agent ends.
 *
 * On a bus with fleet-wide caps (§18) a slot is the host's and one of the fleet's
 * (fleet/fleet-slot.ts): while the bus is unreachable the agent waits in line rather than
 * work unchecked, and a fleet slot taken from it (it could not renew it for the bucket's
 * TTL) is given back and taken again before the next work.
 */
export class WorkSlot implements SlotHold {
  private hold: (SlotHold & { lost?: () => boolean }) | null;
  private ended = false;

  constructor(
    private readonly layout: Layout,
    private readonly cap: number,
    initial: SlotHold | null,
    /** Named on its ticket while it waits in line. */
    private readonly agentId?: string,
    private readonly caps?: CapsBus,
  ) {
    this.hold = initial;
  }

  /** The held slot's index, or -1 when idle without one. */
  get index(): number {
    return this.hold?.index ?? -1;
  }

  held(): boolean {
    return this.hold !== null;
  }

  /**
   * Takes a slot for new work; `onWait` hears `waiting for a slot N/M` when it must wait in
   * line. False when aborted (the agent is ending).
   */
  async take(signal: AbortSignal, onWait: (line: string) => void): Promise<boolean> {
    if (this.hold?.lost?.()) this.give();
    if (this.hold) return true;
    if (this.ended) return false;
    const { layout, cap, caps } = this;
    const fleet = caps?.fleetWide ? caps : undefined;
    const agentId = this.agentId ?? 'agent';
    const attempt = fleet
      ? async () => {
          const { acquireRunning } = await import('../fleet/fleet-slot.js');
          // An unreachable bus is a full fleet: wait in line and try again, never work unchecked.
          return acquireRunning(layout, cap, fleet, agentId).catch(() => null);
        }
      : () => acquireSlot(layout, cap);
    const held = async (): Promise<string> => {
      if (!fleet) return `${await countHeld(layout, cap)}`;
      return fleet.countSlots(cap).then(String, () => '? (the bus is unreachable)');
    };
    const hold = await inTurn(layout, attempt, {
      signal,
      ...(this.agentId ? { agentId: this.agentId } : {}),
      onWait: async () => onWait(`waiting for a slot ${await held()}/${cap}`),
    });
    if (!hold) return false;
    if (signal.aborted || this.ended) {
      hold.release();
      return false;
    }
    this.hold = hold;
    return true;
  }

  /** Gives the slot back while idle. */
  give(): void {
    this.hold?.release();
    this.hold = null;
  }

  /** Gives it up for good (the agent ends). */
  release(): void {
    this.ended = true;
    this.give();
  }
}
