import { createHash } from 'node:crypto';
import type { Layout } from '../layout/layout.js';

/**
 * Names on a shared NATS server (§18): every subject, stream and consumer of a fleet starts
 * with its key, so two fleets on one server never read each other's mail. The key is
 * `fleet.name`, or — for a fleet on one machine — derived from the fleet root's path.
 */
export interface BusNames {
  key: string;
  mailStream: string;
  mailSubject(owner: string): string;
  mailConsumer(owner: string): string;
}

export function busNames(layout: Layout, name: string | null): BusNames {
  const key = name ?? `f${createHash('sha256').update(layout.root).digest('hex').slice(0, 16)}`;
  return {
    key,
    mailStream: `FLOTILLA_${key}_MAIL`,
    mailSubject: (owner) => `flotilla.${key}.mail.${owner}`,
    mailConsumer: (owner) => `inbox_${owner}`,
  };
}

/** A queued message's name in the outbox: `<ms>.<id>.<to>.md` (ids hold no '.'). */
export function outboxName(ms: number, id: string, to: string): string {
  return `${ms}.${id}.${to}.md`;
}

export function parseOutboxName(file: string): { id: string; to: string } | null {
  const m = /^\d+\.([A-Za-z0-9_-]+)\.([A-Za-z0-9_-]+)\.md$/.exec(file);
  return m ? { id: m[1]!, to: m[2]! } : null;
}

/**
 * The spool name of a message the bus hands over: fixed by its id and time, so a second
 * hand-over (a redelivery after a crash before the ack) finds it already there (§4, `fixed`).
 */
export function spoolName(ms: number, id: string): string {
  return `${ms}.${id}.0.bus.md`;
}
