import type { Log } from '../audit/logger.js';
import type { Config } from '../config/schema.js';
import type { AgentRecord } from '../fleet/record.js';
import { predecessors } from '../inbox/adopt.js';
import type { Layout } from '../layout/layout.js';

/** A live agent's process on its bus: what it keeps going while the agent lives. */
export interface BusFeed {
  /** Stops the heartbeat and the record's publishing (before the inbox closes). */
  stopPresence(): void;
  /** Stops feeding the spool and closes the bus; the last write reaches it as it closes. */
  close(): Promise<void>;
  /** Stops feeding the spool only: the bus stays the process's (a shim host's other agents use it). */
  stopFeed(): Promise<void>;
}

/**
 * On a bus, an agent's spool (and its predecessors') is fed from it while its process lives
 * (§18), with its host's heartbeat and its record on the bus. Beating, it also marks silent hosts'
 * agents lost; marked lost itself while this host was silent, `onLost` ends it (§17.8) — and
 * returns false when there is nothing to end yet, to be told again. On `maildir` both are no-ops.
 */
export async function feedFromBus(
  layout: Layout,
  config: Config,
  rec: AgentRecord,
  log: Log,
  onLost: (reason: string) => boolean | void,
): Promise<BusFeed> {
  const [{ busFor, closeBuses }, { keepPresence }] = await Promise.all([
    import('../bus/open.js'),
    import('../bus/presence.js'),
  ]);
  const bus = busFor(layout, config);
  const stopFeeding = await bus.mail.receive([rec.id, ...predecessors(layout, rec)]);
  const lost = bus.kind === 'nats' ? await import('../lifecycle/lost.js') : null;
  const stopPresence = keepPresence(
    layout,
    bus,
    rec.id,
    lost
      ? {
          beat: () => lost.markLostHosts(layout, bus),
          lost: () => {
            const told = onLost(lost.MARKED_LOST_REASON);
            if (told !== false) log.warn({}, lost.MARKED_LOST_REASON);
            return told;
          },
        }
      : {},
  );
  return {
    stopPresence,
    stopFeed: stopFeeding,
    close: async () => {
      await stopFeeding();
      await closeBuses();
    },
  };
}
