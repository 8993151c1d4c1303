import { atExit } from '../at-exit.js';
import type { Config } from '../config/schema.js';
import { offRecordWritten, onRecordWritten } from '../fleet/record-sink.js';
import { isTerminal } from '../fleet/record-status.js';
import type { Layout } from '../layout/layout.js';
import { maildirBus } from './maildir.js';
import type { NatsCaps } from './nats/caps.js';
import type { Bus } from './types.js';

export type {
  AuditBus,
  Bus,
  BusGcResult,
  BusReach,
  DoneClaim,
  HostAuditLine,
  HostBeat,
  MailBus,
  RecentRecords,
  RecordsBus,
} from './types.js';

/** The config a bus is made from: `fleet`, and `hosts` for each host's `lost_after_secs`. */
export type BusConfig = Pick<Config, 'fleet'> & Partial<Pick<Config, 'hosts'>>;

const buses = new Map<string, Bus>();

/**
 * The fleet's bus (`fleet.bus`, §18), one per fleet root and URL in a process: connections
 * are opened on first use and kept, so a harness sending many messages connects once.
 */
export function busFor(layout: Layout, config: BusConfig): Bus {
  const url = config.fleet.bus;
  const key = `${layout.root}\0${url}`;
  let bus = buses.get(key);
  if (!bus) {
    bus = url === 'maildir' ? maildirBus(layout) : lazyNats(layout, url, config);
    buses.set(key, bus);
    // Every record this process writes on this host reaches the bus too (§18, records mirrored).
    // An agent's end frees its parent's place and keeps its final usage, fleet-wide (§5.2, §11): once per process.
    if (bus.kind === 'nats') {
      const { records, caps } = bus;
      const ended = new Set<string>();
      onRecordWritten(layout.root, (rec) => {
        void records.publish(rec);
        if (!isTerminal(rec.status) || ended.has(rec.id)) return;
        ended.add(rec.id);
        // An unreachable bus: the place is freed by the next spawner that finds the record ended; the usage is on the
        // record.
        caps.ended(rec).catch(() => undefined);
      });
    }
  }
  return bus;
}

/**
 * A `nats://` bus whose code (and the NATS client) loads on first use: busFor stays
 * synchronous, and a command that never sends never loads it.
 */
function lazyNats(layout: Layout, url: string, config: BusConfig): Bus {
  let impl: Promise<Omit<Bus, 'caps'>> | undefined;
  const load = () => (impl ??= import('./nats/bus.js').then((m) => m.natsBus(layout, url, config)));
  // Caps load on their own (a spawner checks caps without loading the mail code), over the
  // process's one connection to the bus (nats/link.ts).
  let caps: Promise<NatsCaps> | undefined;
  // Ends told to the bus that the close waits for (they may start before the caps' code is loaded).
  const ending = new Set<Promise<unknown>>();
  const loadCaps = () =>
    (caps ??= import('./nats/caps.js').then((m) =>
      m.natsCaps(layout, url, config.fleet, async () => (await load()).records),
    ));
  return {
    url,
    kind: 'nats',
    mail: {
      deliver: async (draft, opts) => (await load()).mail.deliver(draft, opts),
      claim: async (owner, item) => (await load()).mail.claim(owner, item),
      receive: async (owners) => (await load()).mail.receive(owners),
      collect: async (owners) => (await load()).mail.collect(owners),
      waitingOnBus: async (owners) => (await load()).mail.waitingOnBus(owners),
    },
    caps: {
      fleetWide: true,
      takeSlot: async (agentId, cap) => (await loadCaps()).takeSlot(agentId, cap),
      adoptSlot: async (index, agentId) => (await loadCaps()).adoptSlot(index, agentId),
      countSlots: async (cap) => (await loadCaps()).countSlots(cap),
      claimTreeSpawn: async (rootId, max, agentId) => (await loadCaps()).claimTreeSpawn(rootId, max, agentId),
      treeSpawnCount: async (rootId) => (await loadCaps()).treeSpawnCount(rootId),
      claimChild: async (parentId, max, childId) => (await loadCaps()).claimChild(parentId, max, childId),
      ended: (rec) => {
        const p = loadCaps().then((c) => c.ended(rec));
        const settled = p.catch(() => undefined).finally(() => ending.delete(settled));
        ending.add(settled);
        return p;
      },
      treeUsageElsewhere: async (rootId) => (await loadCaps()).treeUsageElsewhere(rootId),
    },
    records: {
      publish: async (rec, opts) => (await load()).records.publish(rec, opts),
      get: async (id) => (await load()).records.get(id),
      list: async (opts) => (await load()).records.list(opts),
      others: async () => (await load()).records.others(),
      tree: async (rootId) => (await load()).records.tree(rootId),
      find: async (prefix) => (await load()).records.find(prefix),
      live: async () => (await load()).records.live(),
      recent: async (window) => (await load()).records.recent(window),
      beat: async () => (await load()).records.beat(),
      hosts: async () => (await load()).records.hosts(),
      markLost: async (id, reason) => (await load()).records.markLost(id, reason),
      takeDone: async (id, task, by) => (await load()).records.takeDone(id, task, by),
    },
    audit: {
      ship: async () => (await load()).audit.ship(),
      read: async (opts) => (await load()).audit.read(opts),
    },
    gc: async (opts) => (await load()).gc(opts),
    reach: async () => (await load()).reach(),
    close: async () => {
      await Promise.all(ending);
      await Promise.all([impl && (await impl).close(), caps && (await caps).close()]);
    },
  };
}

/** Closes every bus this process opened (flushing what it can): call before a CLI exits. */
export async function closeBuses(): Promise<void> {
  const all = [...buses.entries()];
  buses.clear();
  for (const [key] of all) offRecordWritten(key.slice(0, key.indexOf('\0')));
  await Promise.all(all.map(([, b]) => b.close()));
}

// A command that used a bus lets go of its connections when it is done (src/at-exit.ts).
atExit(closeBuses);
