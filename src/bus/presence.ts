import { readRecord } from '../fleet/registry.js';
import type { Layout } from '../layout/layout.js';
import type { Bus } from './types.js';

/** How often a host's heartbeat is put on the bus, and how often a live agent's record is caught up. */
export const BEAT_MS = 2_000;
/** Every how many beats a live agent's process reads its record on the bus even when it did not change. */
const CHECK_EVERY = 5;

export interface PresenceHooks {
  /** After this process put its host's beat: look for other hosts gone silent (lifecycle/lost.ts). */
  beat?: () => Promise<unknown>;
  /** The fleet marked this agent lost while its host was silent (§17.8); false: not ready, tell again. */
  lost?: () => boolean | void;
}

/**
 * What a live agent's process does on a `nats://` bus besides its mail (§18): every BEAT_MS
 * it beats for its host (at most one process per host puts the beat, and ships the host's audit
 * lines) and brings its record onto the bus again, so a write by another process that has no bus of its own — a hook,
 * `flotilla cancel`, an approval — reaches the other hosts within one beat. The process that
 * beats also marks silent hosts' agents lost; an agent the fleet marked lost is told. On `maildir`
 * there is nothing to do. Returns the function that stops it.
 */
export function keepPresence(layout: Layout, bus: Bus, id: string, on: PresenceHooks = {}): () => void {
  if (bus.kind === 'maildir') return () => undefined;
  let told = false;
  // One look for silent hosts at a time: a slow bus never piles them up.
  let looking = false;
  const look = async () => {
    if (looking || !on.beat) return;
    looking = true;
    try {
      await on.beat();
    } finally {
      looking = false;
    }
  };
  let ticks = 0;
  let shippedOnce = false;
  let last = Date.now();
  const tick = () => {
    // The process that beats also ships the host's audit lines (§9); every agent's process ships
    // once at its start, so it ships its own last lines as its bus closes (bus/nats/audit.ts).
    const first = !shippedOnce;
    shippedOnce = true;
    void bus.records
      .beat()
      .then((mine) => {
        if (mine || first) void bus.audit.ship();
        return mine ? look() : undefined;
      })
      .catch(() => undefined);
    // The bus's copy is read now and then, and at once after a gap (this process was stopped, the
    // machine slept): the fleet may have marked the agent lost while this host was silent.
    const gap = Date.now() - last > 2 * BEAT_MS;
    last = Date.now();
    const check = gap || ++ticks % CHECK_EVERY === 0;
    let rec;
    try {
      rec = readRecord(layout, id);
    } catch {
      return;
    }
    if (rec) {
      void bus.records.publish(rec, { check }).then((r) => {
        if (r !== 'lost' || told || !on.lost) return;
        told = on.lost() !== false;
      });
    }
  };
  tick();
  const timer = setInterval(tick, BEAT_MS);
  timer.unref();
  return () => clearInterval(timer);
}
