import { moveCursor, owedLines } from '../../audit/cursor.js';
import type { Layout } from '../../layout/layout.js';
import type { BusNames } from '../names.js';
import type { AuditBus, HostAuditLine } from '../types.js';
import { perLink, type Link, type NatsLink } from './link.js';
import { readsOf } from './last-values.js';
import { ensureStream } from './streams.js';
import { nanos, withTimeout } from './timeout.js';

/** How long a line id is remembered by the stream: far past any cursor moved back by a race. */
const DUPLICATE_WINDOW_MS = 60 * 60 * 1000;
const PUBLISH_TIMEOUT_MS = 5_000;
/** Lines published before their acks are awaited: one round trip per window, not per line. */
const WINDOW = 256;
const READ_TIMEOUT_MS = 5_000;
const BATCH = 1_000;
const FETCH_EXPIRES_MS = 2_000;

export interface NatsAudit {
  audit: AuditBus;
  /** Ships once more if this process shipped before (its own last lines), before the connection closes. */
  close(): Promise<void>;
}

/**
 * The audit half of a `nats://` bus (§9, §18; docs/decisions-hosts.md "The audit log on the bus"):
 * one stream per fleet, `FLOTILLA_<fleet>_AUDIT`, subject `flotilla.<fleet>.audit.<host>`,
 * each line published as written under its id (`<file>.<offset>`, src/audit/cursor.ts) so
 * a line sent twice is stored once. The stream drops lines older than `maxAgeMs`
 * (`fleet.audit_max_age_secs`; 0 keeps every line); each host's file keeps them all.
 */
export function natsAudit(
  layout: Layout,
  names: BusNames,
  connection: NatsLink,
  self: string,
  maxAgeMs: number,
): NatsAudit {
  // Bounded by age, never by size: a busy host's lines never push a quiet host's out (docs/decisions-hosts.md "The
  // audit log on the bus").
  const open = perLink(connection, async (link) => {
    await ensureStream(link.jsm, names.auditStream, names.auditSubject('>'), {
      retention: 'limits',
      duplicateWindowMs: DUPLICATE_WINDOW_MS,
      maxAgeMs,
    });
    return link;
  });

  // Whether this process's last ship reached the bus: a close after one that did not waits for no second timeout.
  let reaching = true;
  const shipAll = async (): Promise<number> => {
    const shipped = await shipOwed(layout, open, names.auditSubject(self));
    reaching = shipped.reaching;
    return shipped.sent;
  };

  // One ship at a time in a process; one asked for meanwhile runs once after it (lines written since).
  let shipped = false;
  let running: Promise<number> | null = null;
  let again: Promise<number> | null = null;
  const ship = (): Promise<number> => {
    shipped = true;
    if (!running) {
      running = shipAll().finally(() => {
        running = null;
      });
      return running;
    }
    again ??= running.then(() => {
      again = null;
      return ship();
    });
    return again;
  };

  // Every line id this process has handed out: a line the stream took twice (sent again after its window) shows once.
  const seen = new Set<string>();

  // Each other host's subject is read by a consumer of its own, all at once: this host's lines
  // (read from its file, the writer's copy) never cross the wire. NATS 2.9 has one filter per consumer.
  const read: AuditBus['read'] = async (opts = {}) => {
    const link = await withTimeout(open(), READ_TIMEOUT_MS);
    const from = opts.from ?? 0;
    const prefix = names.auditSubject('');
    // Through the reads, which never ask a filtered info of a stream that may lack its store (store-window.ts).
    const state = await withTimeout(
      (await readsOf(link)).streamState(names.auditStream, names.auditSubject(opts.host ?? '>')),
      READ_TIMEOUT_MS,
    );
    const hosts = Object.keys(state?.subjects ?? {})
      .map((s) => s.slice(prefix.length))
      .filter((h) => h !== self || opts.host === self);
    // Everything up to the stream's end as it was before the reads is read by them; a later read
    // starts after it (a line that lands meanwhile may come twice, and `seen` drops it).
    const next = Math.max(from, (state?.last_seq ?? 0) + 1);
    const lines = (await Promise.all(hosts.sort().map((h) => readHost(link, names, h, from, seen)))).flat();
    return { lines, next };
  };

  return {
    audit: { ship, read },
    async close() {
      if (!shipped) return;
      // A ship under way ends first; one more only if the bus answered it and is still there (this
      // process's last lines): a closing process never waits out a timeout for them — the next shipper sends them.
      await running?.catch(() => undefined);
      if (reaching && connection.up()) await ship();
    },
  };
}

/**
 * Publishes the lines this host owes the bus (src/audit/cursor.ts) on `subject`, a window at a
 * time, moving the cursor over each line the stream took; `reaching` says whether the bus
 * answered to the end.
 */
async function shipOwed(
  layout: Layout,
  open: () => Promise<Link>,
  subject: string,
): Promise<{ sent: number; reaching: boolean }> {
  let sent = 0;
  try {
    // The stream is made sure of once there is a line to send: a look that owes none (most) asks the bus nothing.
    let js: Link['js'] | undefined;
    for (;;) {
      const owed = owedLines(layout);
      if (!owed) return { sent, reaching: true };
      if (owed.lines.length === 0) {
        if (owed.to === owed.from) return { sent, reaching: true };
        // Only lines that are not audit lines: step over them.
        moveCursor(layout, owed.file, owed.to);
        continue;
      }
      const bus = (js ??= (await withTimeout(open(), PUBLISH_TIMEOUT_MS)).js);
      for (let i = 0; i < owed.lines.length; i += WINDOW) {
        const chunk = owed.lines.slice(i, i + WINDOW);
        const acks = await Promise.allSettled(
          chunk.map((l) => bus.publish(subject, l.text, { msgID: l.id, timeout: PUBLISH_TIMEOUT_MS })),
        );
        // The cursor moves over the lines the stream took, up to the first it did not.
        const took = acks.findIndex((a) => a.status === 'rejected');
        const upTo = took < 0 ? chunk.length : took;
        sent += upTo;
        const last = i + upTo === owed.lines.length ? owed.to : chunk[upTo - 1]?.end;
        if (last !== undefined) moveCursor(layout, owed.file, last);
        if (took >= 0) return { sent, reaching: false };
      }
    }
  } catch {
    // Away or slow: the cursor stays, and the next process of this host that reaches the bus sends them.
    return { sent, reaching: false };
  }
}

/** One host's lines from stream position `from` on, in its order, through an ephemeral consumer of its subject. */
async function readHost(
  link: Link,
  names: BusNames,
  host: string,
  from: number,
  seen: Set<string>,
): Promise<HostAuditLine[]> {
  const info = await withTimeout(
    link.jsm.consumers.add(names.auditStream, {
      ack_policy: 'none',
      ...(from > 0
        ? { deliver_policy: 'by_start_sequence' as const, opt_start_seq: from }
        : { deliver_policy: 'all' as const }),
      filter_subject: names.auditSubject(host),
      inactive_threshold: nanos(60_000),
      mem_storage: true,
    }),
    READ_TIMEOUT_MS,
  );
  const lines: HostAuditLine[] = [];
  try {
    if (info.num_pending === 0) return lines;
    const consumer = await link.js.consumers.get(names.auditStream, info.name);
    for (let caughtUp = false; !caughtUp;) {
      let got = 0;
      for await (const m of await consumer.fetch({ max_messages: BATCH, expires: FETCH_EXPIRES_MS })) {
        got++;
        const id = `${host}.${m.headers?.get('Nats-Msg-Id') ?? m.seq}`;
        if (!seen.has(id)) {
          seen.add(id);
          const line = parseLine(m.data, host);
          if (line) lines.push(line);
        }
        if (m.info.pending === 0) {
          caughtUp = true;
          break;
        }
      }
      if (got === 0) break;
    }
  } finally {
    await link.jsm.consumers.delete(names.auditStream, info.name).catch(() => undefined);
  }
  return lines;
}

/**
 * A line as its host wrote it, with `host` naming that host (a line's own `host` field, if any, kept as `agent_host`).
 */
function parseLine(data: Uint8Array, host: string): HostAuditLine | null {
  try {
    const v = JSON.parse(new TextDecoder().decode(data)) as unknown;
    if (typeof v !== 'object' || v === null || Array.isArray(v)) return null;
    const line = v as Record<string, unknown>;
    if ('host' in line && !('agent_host' in line)) line.agent_host = line.host;
    return { ...line, host };
  } catch {
    return null;
  }
}
