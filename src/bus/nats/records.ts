import { closeSync, openSync, statSync, utimesSync } from 'node:fs';
import type { KV, KvEntry } from '@nats-io/kv';
import { isErrno } from '../../errors.js';
import { isTerminal } from '../../fleet/record-status.js';
import type { AgentRecord } from '../../fleet/record.js';
import { listIds, listRecords, readRecord } from '../../fleet/registry.js';
import type { Layout } from '../../layout/layout.js';
import { byCodeUnit } from '../../compare.js';
import type { BusNames } from '../names.js';
import type { HostBeat, RecordsBus } from '../types.js';
import { BEAT_MS } from '../presence.js';
import { lastValues, type LastValue } from './last-values.js';
import { missed, reached } from '../steady.js';
import { boundBucket, type BoundBucket } from './bound-bucket.js';
import { perLink, type NatsLink } from './link.js';
import { isWrongRevision, markLostOn, takeDoneOn } from './lost.js';
import { endedKey, moveEnded, recentKey } from './ended.js';
import { getRecord, keyNames, othersOf, recentOf, recordsOf } from './record-reads.js';
import { keepUsage, keptUsage } from './usage.js';
import { withTimeout } from './timeout.js';
import { owed, owedIds, settled } from './owed.js';

/** The live records' keys: one token, an agent id (ended ones are `ended.<id>`, nats/ended.ts). */
const LIVE_KEYS = '*';
/** A reader (status, a parent's check) waits this long for the bus, then shows what it has. */
const READ_TIMEOUT_MS = 5_000;
const PUT_TIMEOUT_MS = 5_000;

interface Buckets {
  records: KV;
  hosts: KV;
  /** The fleet-wide once-markers of completions (lost.ts). */
  done: KV;
  /** The trees bucket (caps): each ended agent's kept usage (usage.ts). */
  trees: KV;
}

/** A host's heartbeat as it is stored (HOSTS bucket, key = host name). */
interface Beat {
  host: string;
  pid: number;
}

export interface NatsRecords {
  records: RecordsBus;
  /** Waits for the publishes under way (before the connection closes). */
  drain(): Promise<void>;
}

/**
 * The records half of a `nats://` bus (§18): the RECORDS bucket holds every host's records,
 * each put by the host that runs the agent with a revision check (a put that lost a race
 * reads this host's file again and retries, so the bus never goes back to an older copy);
 * the HOSTS bucket holds each host's heartbeat. This host's own records are read from its
 * registry, the writer's copy.
 */
export function natsRecords(
  layout: Layout,
  names: BusNames,
  connection: NatsLink,
  opts: { self: string; lostAfterMs: (host: string) => number },
): NatsRecords {
  const ctx: Ctx = { layout, names, connection, ...bucketsOf(connection, names), ...opts };

  // The JSON last put for each id by this process: an unchanged record costs no round trip.
  const published = new Map<string, string>();
  // One publish per id at a time; a second asked for meanwhile runs once after it (reading the file then).
  const running = new Map<string, Promise<PublishResult>>();
  const again = new Map<string, Promise<PublishResult>>();
  const inFlight = new Set<Promise<unknown>>();

  const publish = (rec: AgentRecord, opts: { check?: boolean } = {}): Promise<PublishResult> => {
    const current = running.get(rec.id);
    if (!current) return start(rec, opts.check ?? false);
    let next = again.get(rec.id);
    if (!next) {
      next = current.then(() => {
        again.delete(rec.id);
        return start(rec, opts.check ?? false);
      });
      again.set(rec.id, next);
    }
    return next;
  };
  const start = (rec: AgentRecord, check: boolean): Promise<PublishResult> => {
    const p = syncRecord(ctx, published, rec, check).finally(() => {
      if (running.get(rec.id) === p) running.delete(rec.id);
      inFlight.delete(p);
    });
    running.set(rec.id, p);
    inFlight.add(p);
    return p;
  };

  // Records whose publish failed while the bus was away (any process of this host): sent again.
  const catchUp = () => {
    for (const id of owedIds(layout)) {
      const rec = localRecord(layout, id);
      if (rec) void publish(rec);
      else settled(layout, id);
    }
  };

  const records: RecordsBus = {
    publish,
    ...recordReads(ctx, catchUp),
    async beat() {
      if (!dueBeat(layout)) return false;
      catchUp();
      try {
        const { hosts } = await withTimeout(ctx.buckets(), PUT_TIMEOUT_MS);
        const beat: Beat = { host: opts.self, pid: process.pid };
        await withTimeout(hosts.put(opts.self, JSON.stringify(beat)), PUT_TIMEOUT_MS);
        reached(layout);
        return true;
      } catch {
        missed(layout);
        // A missed beat is caught up by the next; enough of them and readers call this host lost.
        return false;
      }
    },
    async markLost(id, reason) {
      try {
        const { records: kv, done } = await withTimeout(ctx.buckets(), PUT_TIMEOUT_MS);
        return await markLostOn(kv, done, id, opts.self, reason);
      } catch {
        return null;
      }
    },
    async takeDone(id, task, by) {
      try {
        const { done } = await withTimeout(ctx.buckets(), PUT_TIMEOUT_MS);
        return await takeDoneOn(done, id, task, by, opts.self);
      } catch {
        return 'unreachable';
      }
    },
  };

  return {
    records,
    async drain() {
      await Promise.allSettled([...inFlight, ...again.values()]);
    },
  };
}

/**
 * The records half's buckets on the process's connection, each way once per connection: a writer
 * makes sure of them (created when missing); a reader binds to them (no request), and a bucket
 * not made yet reads as empty (last-values.ts).
 */
function bucketsOf(connection: NatsLink, names: BusNames): Pick<Ctx, 'buckets' | 'bound'> {
  return {
    buckets: perLink(connection, async (link) => {
      const kvm = new (await import('./client.js')).Kvm(link.js);
      return Promise.all([
        kvm.create(names.recordsBucket, { history: 1 }),
        kvm.create(names.hostsBucket, { history: 1 }),
        kvm.create(names.doneBucket, { history: 1 }),
        kvm.create(names.treesBucket, { history: 1 }),
      ]).then(([records, hosts, done, trees]) => ({ records, hosts, done, trees }));
    }),
    bound: perLink(connection, async (link) => ({
      records: boundBucket(link.js, link.jsm, names.recordsBucket),
    })),
  };
}

/** What the records half works with: this host, the bus's buckets over the process's connection. */
interface Ctx {
  layout: Layout;
  names: BusNames;
  connection: NatsLink;
  buckets: () => Promise<Buckets>;
  /** The records bucket bound for reads, never made by them. */
  bound: () => Promise<{ records: BoundBucket }>;
  self: string;
  lostAfterMs: (host: string) => number;
}

/**
 * Puts this host's copy of a record (`fallback` when it has none) on the bus: revision-checked,
 * read again and retried when another process of this host put it first; an ended one is moved
 * to its ended key with its usage kept. `check`: put even when this process put the same JSON last.
 */
async function syncRecord(
  ctx: Ctx,
  published: Map<string, string>,
  fallback: AgentRecord,
  check: boolean,
): Promise<PublishResult> {
  const { layout } = ctx;
  const id = fallback.id;
  try {
    const unchanged = published.get(id);
    if (!check && unchanged !== undefined && unchanged === JSON.stringify(localRecord(layout, id) ?? fallback))
      return 'published';
    const { records, trees } = await withTimeout(ctx.buckets(), PUT_TIMEOUT_MS);
    for (let attempt = 0; attempt < 10; attempt++) {
      const entry = await withTimeout(records.get(id), PUT_TIMEOUT_MS);
      // The fleet ended it while this host was silent: terminal states never change (§3), and its harness ends itself
      // (§17.8).
      if (entry?.operation === 'PUT' && statusOf(entry) === 'lost') {
        settled(layout, id);
        return 'lost';
      }
      // Read after the bus's revision: a put that wins below carries a copy at least as new as any before it.
      const local = localRecord(layout, id) ?? fallback;
      const data = JSON.stringify(local);
      if (published.get(id) === data && entry?.operation === (isTerminal(local.status) ? undefined : 'PUT'))
        return 'published';
      try {
        // Ended here: out of the live keys, so readers of live agents never read the history (nats/ended.ts);
        // its usage kept first, so a tree's live records plus its kept usage always count it (usage.ts).
        if (isTerminal(local.status)) {
          await withTimeout(
            (async () => {
              await keepUsage(trees, local, ctx.self);
              await moveEnded(
                await ctx.connection.open(),
                records,
                ctx.names.recordsBucket,
                entry,
                local,
                data,
                ctx.self,
              );
            })(),
            PUT_TIMEOUT_MS,
          );
        } else if (entry && entry.operation === 'PUT')
          await withTimeout(records.update(id, data, entry.revision), PUT_TIMEOUT_MS);
        else if (entry) await withTimeout(records.put(id, data, { previousSeq: entry.revision }), PUT_TIMEOUT_MS);
        else await withTimeout(records.create(id, data), PUT_TIMEOUT_MS);
        published.set(id, data);
        settled(layout, id);
        return 'published';
      } catch (err) {
        if (!isWrongRevision(err)) throw err;
        // Another process of this host put it first: read both again.
      }
    }
    return 'unreachable';
  } catch {
    // Down or slow: marked, so the next process of this host that reaches the bus publishes it.
    published.delete(id);
    owed(layout, id);
    return 'unreachable';
  }
}

type Reads = Pick<RecordsBus, 'get' | 'list' | 'others' | 'tree' | 'find' | 'live' | 'recent' | 'hosts'>;

/** The reads of the records half: this host's own records from its registry, the others' from the bus. */
function recordReads(ctx: Ctx, catchUp: () => void): Reads {
  const { layout, names, self } = ctx;
  // Each key's last value (bus/nats/last-values.ts), once the buckets are made sure of.
  const entries = (bucket: string, keys?: string): Promise<LastValue[]> => lastValues(ctx.connection, bucket, keys);
  // The records bucket, bound (on the client's connection) only for a get by key.
  const kv = async () => (await ctx.bound()).records;
  const liveOthers = async (): Promise<AgentRecord[]> =>
    recordsOf(await entries(names.recordsBucket, LIVE_KEYS)).filter((r) => r.host !== self);
  return {
    async get(id) {
      const local = readRecord(layout, id);
      if (local) return local;
      try {
        const { records: kv } = await withTimeout(ctx.bound(), READ_TIMEOUT_MS);
        return await withTimeout(getRecord(kv, id), READ_TIMEOUT_MS);
      } catch {
        return undefined;
      }
    },
    async list(opts = {}) {
      const wait = opts.timeoutMs ?? READ_TIMEOUT_MS;
      catchUp();
      const here = listRecords(layout);
      const known = new Set(here.map((r) => r.id));
      let remote: AgentRecord[] = [];
      try {
        remote = recordsOf(await withTimeout(entries(names.recordsBucket), wait)).filter((r) => !known.has(r.id));
      } catch {
        // The bus is away: this host's records are all there is to show (status says the bus is unreachable).
      }
      return [...here, ...remote].sort((a, b) => byCodeUnit(a.createdAt, b.createdAt) || byCodeUnit(a.id, b.id));
    },
    others: () =>
      withTimeout(
        (async () => {
          const all = await othersOf(ctx.connection, kv, names.recordsBucket, new Set(listIds(layout)));
          return all.filter((r) => r.host !== self);
        })(),
        READ_TIMEOUT_MS,
      ),
    tree: (rootId) =>
      withTimeout(
        (async () => {
          // The live keys first: an agent that ends meanwhile had its usage kept before its live key went, so the read
          // after finds it.
          const live = (await liveOthers()).filter((r) => r.rootId === rootId);
          const kept = await keptUsage(ctx.connection, names.treesBucket, rootId);
          for (const [id, u] of kept) if (u.host === self) kept.delete(id);
          return { live, ended: kept };
        })(),
        READ_TIMEOUT_MS,
      ),
    find: (prefix) =>
      withTimeout(
        (async () => {
          const ids = (await keyNames(ctx.connection, names.recordsBucket, [LIVE_KEYS, endedKey('*')]))
            .map((k) => (k.startsWith('ended.') ? k.slice('ended.'.length) : k))
            .filter((id) => id.startsWith(prefix));
          const bucket = ids.length ? await kv() : undefined;
          const found = await Promise.all([...new Set(ids)].map((id) => getRecord(bucket!, id)));
          return found.filter((r): r is AgentRecord => r !== undefined);
        })(),
        READ_TIMEOUT_MS,
      ),
    live: () => withTimeout(liveOthers(), READ_TIMEOUT_MS),
    recent: (window) =>
      withTimeout(
        (async () => {
          // The lists first, then the live keys: a live read (bounded at the stream's end when it begins,
          // last-values.ts) is then never older than the lists, so an agent moved to its list meanwhile is read
          // there, not as the live record it was before.
          const lists = await entries(names.recordsBucket, recentKey('*'));
          const live = await entries(names.recordsBucket, LIVE_KEYS);
          return recentOf(kv, live, lists, self, window);
        })(),
        READ_TIMEOUT_MS,
      ),
    hosts: async () => beatsOf(await withTimeout(entries(names.hostsBucket), READ_TIMEOUT_MS), self, ctx.lostAfterMs),
  };
}

/** Each host's heartbeat as readers judge it, this host first. */
function beatsOf(values: readonly LastValue[], self: string, lostAfter: (host: string) => number): HostBeat[] {
  const now = Date.now();
  const beats = values.map((e) => {
    // The server's time of the put: the beating host's clock does not matter, only the reader's.
    const ageMs = Math.max(0, now - e.created.getTime());
    const lostAfterMs = lostAfter(e.key);
    return {
      host: e.key,
      at: e.created.toISOString(),
      ageMs,
      lost: ageMs > lostAfterMs,
      lostAfterMs,
      self: e.key === self,
    };
  });
  return beats.sort((a, b) => Number(b.self) - Number(a.self) || byCodeUnit(a.host, b.host));
}

type PublishResult = Awaited<ReturnType<RecordsBus['publish']>>;

/** This host's copy of a record, or undefined when it has none (or it cannot be read: the caller's copy goes). */
function localRecord(layout: Layout, id: string): AgentRecord | undefined {
  try {
    return readRecord(layout, id);
  } catch {
    return undefined;
  }
}

/** The status of a record as the bus holds it, without validating the rest. */
function statusOf(e: KvEntry): string | undefined {
  try {
    return (JSON.parse(new TextDecoder().decode(e.value)) as { status?: string }).status;
  } catch {
    return undefined;
  }
}

/**
 * Whether this process should put the host's heartbeat now: the first of this host's
 * processes whose beat falls due touches `state/host-beat`, so a host with a hundred agents
 * still beats about once per BEAT_MS rather than a hundred times.
 */
function dueBeat(layout: Layout): boolean {
  const now = Date.now();
  try {
    if (now - statSync(layout.hostBeat).mtimeMs < BEAT_MS / 2) return false;
  } catch (err) {
    if (!isErrno(err, 'ENOENT')) return true;
    try {
      closeSync(openSync(layout.hostBeat, 'a'));
    } catch {
      return true;
    }
  }
  try {
    utimesSync(layout.hostBeat, now / 1000, now / 1000);
  } catch {
    /* the beat goes out anyway */
  }
  return true;
}
