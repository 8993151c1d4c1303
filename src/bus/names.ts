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
  /** KV bucket of the fleet's running slots (docs/decisions-hosts.md "Caps on the bus"). */
  slotsBucket: string;
  /** KV bucket of the trees' spawn numbers. */
  treesBucket: string;
  /** KV bucket: agent id → its record, put by the host that runs it. */
  recordsBucket: string;
  /** KV bucket: host name → its last heartbeat. */
  hostsBucket: string;
  /** KV bucket: `<agent id>.task-<n>` → who sent that task's completion, the fleet-wide once-marker (§5.7, §17.8). */
  doneBucket: string;
  /**
   * KV bucket: `<board>.<task id>` → the task, the fleet's one set of boards (docs/decisions-hosts.md "One board and
   * one set of leases on the bus").
   */
  boardBucket: string;
  /** KV bucket: `repo.<repository identity>` → that repository's leases and queue. */
  leasesBucket: string;
  /** Stream of every host's audit lines (§9), one subject per host. */
  auditStream: string;
  auditSubject(host: string): string;
}

/**
 * `self` is this host's name: the person's inbox `human` is each host's own (mail to `human`
 * is for the person at the host it is sent from: a root's completion, an approval request),
 * so its subject and consumer carry the host, and one host's `status` never collects another
 * host's person's mail.
 */
export function busNames(layout: Layout, name: string | null, self = 'local'): BusNames {
  const key = name ?? `f${createHash('sha256').update(layout.root).digest('hex').slice(0, 16)}`;
  const owned = (owner: string) => (owner === 'human' ? `human.${self}` : owner);
  return {
    key,
    mailStream: `FLOTILLA_${key}_MAIL`,
    mailSubject: (owner) => `flotilla.${key}.mail.${owned(owner)}`,
    mailConsumer: (owner) => `inbox_${owned(owner).replace('.', '_')}`,
    slotsBucket: `FLOTILLA_${key}_SLOTS`,
    treesBucket: `FLOTILLA_${key}_TREES`,
    recordsBucket: `FLOTILLA_${key}_RECORDS`,
    hostsBucket: `FLOTILLA_${key}_HOSTS`,
    doneBucket: `FLOTILLA_${key}_DONE`,
    boardBucket: `FLOTILLA_${key}_BOARD`,
    leasesBucket: `FLOTILLA_${key}_LEASES`,
    auditStream: `FLOTILLA_${key}_AUDIT`,
    auditSubject: (host) => `flotilla.${key}.audit.${host}`,
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
