import { hostname } from 'node:os';
import { JetStreamApiCodes, JetStreamApiError } from '@nats-io/jetstream';
import { Kvm, type KV } from '@nats-io/kv';
import type { Config } from '../../config/schema.js';
import { errorMessage, FlotillaError, refusal } from '../../errors.js';
import { isProcessAlive, selfProcess } from '../../fleet/proc.js';
import { selfHost } from '../../hosts/self.js';
import type { Layout } from '../../layout/layout.js';
import { busNames, type BusNames } from '../names.js';
import type { CapsBus, FleetSlot } from '../../fleet/caps-port.js';
import type { RecordsBus } from '../types.js';
import { natsTreeCaps } from './children.js';
import { natsLink, type NatsLink } from './link.js';

/**
 * Caps on a `nats://` bus (§5.2, §18; docs/decisions-hosts.md "Caps on the bus"). A running slot
 * of the fleet is the key `slot.<k>`, k in 0..max_running-1, of the fleet's slot bucket:
 * taken by a KV `create`, which the server grants to exactly one writer whatever the hosts,
 * so at most max_running keys are held. Its holder renews it every RENEW_MS by a
 * revision-checked write; a holder that dies stops renewing and the bucket's max_age drops
 * the key SLOT_TTL_MS after its last renewal. A holder that died on the taker's own host is
 * seen dead (pid and start time) and its slot freed at once, as the kernel frees the host's
 * socket slot; one on another host — a SIGKILLed harness there, or a host switched off —
 * keeps its slot until the TTL. That is the price of a server without locks tied to a
 * process (NATS 2.9 has no per-message TTL, so the TTL is the bucket's).
 *
 * A tree's spawn n is the key `tree.<root>.<n>` of the trees bucket, also taken by `create`:
 * the O_EXCL files of fleet/caps.ts, on the server. The same bucket holds each parent's
 * child places and each ended agent's usage (children.ts).
 */

/** How long a slot outlives its holder's last renewal (the slot bucket's max_age). */
export const SLOT_TTL_MS = 30_000;
/** Renewed six times per TTL, so a loaded machine or a short blip of the bus never loses a live holder's slot. */
const RENEW_MS = 5_000;
/** How long a KV request may take before the bus counts as unreachable. */
const KV_TIMEOUT_MS = 5_000;

interface Buckets {
  slots: KV;
  trees: KV;
}

interface SlotValue {
  agent: string;
  host: string;
  pid: number;
  /** The holder's start time (fleet/proc.ts), so a reused pid is never taken for it. */
  start: string | null;
}

const slotKey = (index: number): string => `slot.${index}`;
const treeKey = (rootId: string, n: number): string => `tree.${rootId}.${n}`;

function wrongRevision(err: unknown): boolean {
  return (
    err instanceof JetStreamApiError &&
    (err.code === JetStreamApiCodes.StreamWrongLastSequence ||
      err.code === JetStreamApiCodes.StreamWrongLastSequenceUnknown)
  );
}

/** This host's name in a slot's value: a holder is checked for life only by its own host. */
function thisHost(): string {
  return process.env.FLOTILLA_HOST || hostname();
}

function holder(agentId: string): Uint8Array {
  const value: SlotValue = { agent: agentId, host: thisHost(), pid: selfProcess().pid, start: selfProcess().start };
  return new TextEncoder().encode(JSON.stringify(value));
}

/**
 * Frees a slot whose holder ran on this host and is dead (SIGKILL): it will never renew it,
 * and this host can see so, as the kernel frees the host's own slot. A revision-checked
 * delete: of several spawners noticing at once, one deletes and the others' deletes fail;
 * then the creates settle who takes it. A holder on another host is left to the TTL.
 */
async function freeIfDead(kv: KV, index: number): Promise<void> {
  const entry = await kv.get(slotKey(index));
  if (entry?.operation !== 'PUT') return;
  const held = readHolder(entry.value);
  if (!held || held.host !== thisHost() || isProcessAlive(held.pid, held.start)) return;
  await kv.delete(slotKey(index), { previousSeq: entry.revision }).catch((err: unknown) => {
    if (!wrongRevision(err)) throw err;
  });
}

function readHolder(data: Uint8Array): SlotValue | null {
  try {
    return JSON.parse(new TextDecoder().decode(data)) as SlotValue;
  } catch {
    return null;
  }
}

/** Takes slot `index` if free; null when someone holds it. */
async function create(kv: KV, index: number, value: Uint8Array): Promise<number | null> {
  try {
    return await kv.create(slotKey(index), value);
  } catch (err) {
    if (wrongRevision(err)) return null;
    throw err;
  }
}

export interface NatsCaps extends CapsBus {
  close(): Promise<void>;
}

/** `records`: the fleet's records and heartbeats, which say whether a child holding a place still counts. */
export function natsCaps(
  layout: Layout,
  url: string,
  fleet: Config['fleet'],
  records: () => Promise<RecordsBus>,
): NatsCaps {
  const names = busNames(layout, fleet.name);
  const connection = natsLink(url, fleet.nats);
  let link: Promise<Buckets> | null = null;
  const releasing = new Set<Promise<unknown>>();

  const open = (): Promise<Buckets> => {
    link ??= openBuckets(connection, names);
    // A failed connect is forgotten, so the next try connects afresh.
    link.catch(() => {
      link = null;
    });
    return link;
  };

  /** Runs one exchange with the bus; whatever keeps it from answering is the bus-unreachable refusal. */
  const ask = async <T>(fn: (b: Buckets) => Promise<T>): Promise<T> => {
    let b: Buckets;
    try {
      b = await open();
    } catch (err) {
      throw unreachable(url, err);
    }
    try {
      return await fn(b);
    } catch (err) {
      if (err instanceof FlotillaError || wrongRevision(err)) throw err;
      throw unreachable(url, err);
    }
  };

  const track = (p: Promise<unknown>): void => {
    const settled = p.catch(() => undefined).finally(() => releasing.delete(settled));
    releasing.add(settled);
  };

  return {
    fleetWide: true,
    ...natsTreeCaps((fn) => ask(({ trees }) => fn(trees)), selfHost(fleet), records, track),
    takeSlot: (agentId, cap) => ask(({ slots }) => takeSlotOn(slots, agentId, cap, track)),
    adoptSlot: (index, agentId) => ask(({ slots }) => adoptSlotOn(slots, index, agentId, track)),
    countSlots: (cap) =>
      ask(async ({ slots }) => {
        const entries = await Promise.all(Array.from({ length: cap }, (_, k) => slots.get(slotKey(k))));
        return entries.filter((e) => e?.operation === 'PUT').length;
      }),
    claimTreeSpawn: (rootId, max, agentId) => ask(({ trees }) => claimTreeSpawnOn(trees, rootId, max, agentId)),
    treeSpawnCount: (rootId) =>
      ask(async ({ trees }) => {
        let n = 0;
        for await (const _ of await trees.keys(`tree.${rootId}.*`)) n++;
        return n;
      }),

    async close() {
      await Promise.all(releasing);
      link = null;
      await connection.close();
    },
  };
}

function unreachable(url: string, err: unknown): FlotillaError {
  return refusal(
    'bus-unreachable',
    `spawn refused: the bus ${url} is unreachable, so the fleet's caps cannot be checked (${errorMessage(err)}) — start it (nats-server -js) or check fleet.bus`,
    { bus: url },
  );
}

/** The slot and trees buckets made sure of, on the process's connection to the bus. */
async function openBuckets(connection: NatsLink, names: BusNames): Promise<Buckets> {
  const kvm = new Kvm((await connection.open()).js);
  const [slots, trees] = await Promise.all([
    kvm.create(names.slotsBucket, { history: 1, ttl: SLOT_TTL_MS, timeout: KV_TIMEOUT_MS }),
    kvm.create(names.treesBucket, { history: 1, timeout: KV_TIMEOUT_MS }),
  ]);
  return { slots, trees };
}

/**
 * The first free slot below `cap` for `agentId`, freeing those whose holder died on this host if all are held; null
 * when none.
 */
async function takeSlotOn(slots: KV, agentId: string, cap: number, track: Track): Promise<FleetSlot | null> {
  const value = holder(agentId);
  const tried: number[] = [];
  for (let index = 0; index < cap; index++) {
    const rev = await create(slots, index, value);
    if (rev !== null) return heldSlot(slots, index, value, rev, false, track);
    tried.push(index);
  }
  // All held: any whose holder died on this host comes back at once.
  for (const index of tried) {
    await freeIfDead(slots, index);
    const rev = await create(slots, index, value);
    if (rev !== null) return heldSlot(slots, index, value, rev, false, track);
  }
  return null;
}

/** Slot `index`, taken by a spawner for `agentId`, taken over by the agent's own harness. */
async function adoptSlotOn(slots: KV, index: number, agentId: string, track: Track): Promise<FleetSlot> {
  const value = holder(agentId);
  // The spawner may renew it at the same moment: a lost race is retried while the key still names this agent.
  for (let attempt = 0; ; attempt++) {
    const entry = await slots.get(slotKey(index));
    const held = entry && entry.operation === 'PUT' ? readHolder(entry.value) : null;
    if (!entry || !held) {
      throw new FlotillaError(
        `fleet slot ${index} is free: the spawner gave it up or it expired (no renewal for ${SLOT_TTL_MS / 1000} s) — spawn the agent again`,
        { code: 'slot-handoff' },
      );
    }
    if (held.agent !== agentId) {
      throw new FlotillaError(
        `fleet slot ${index} is held by '${held.agent}' on ${held.host} — spawn the agent again`,
        {
          code: 'slot-taken',
        },
      );
    }
    try {
      const rev = await slots.update(slotKey(index), value, entry.revision);
      return heldSlot(slots, index, value, rev, true, track);
    } catch (err) {
      if (!wrongRevision(err) || attempt >= 5) throw err;
    }
  }
}

/**
 * The lowest spawn number of tree `rootId` still free, taken for `agentId`; the tree-limit refusal when all `max` are.
 */
async function claimTreeSpawnOn(trees: KV, rootId: string, max: number, agentId: string): Promise<number> {
  const taken = new Set<string>();
  for await (const k of await trees.keys(`tree.${rootId}.*`)) taken.add(k);
  // Skip the numbers already taken, but try every gap: a racing claim settles on create.
  for (let n = 0; n < max; n++) {
    if (taken.has(treeKey(rootId, n))) continue;
    try {
      await trees.create(treeKey(rootId, n), holder(agentId));
      return n;
    } catch (err) {
      if (!wrongRevision(err)) throw err;
    }
  }
  throw refusal(
    'tree-limit',
    `spawn refused: tree '${rootId}' has used all ${max} spawns (limits.max_spawns_per_tree ${max}) — finish with the agents you have, or raise limits.max_spawns_per_tree`,
    { root: rootId, spawns: max, max },
  );
}

/** Keeps a slot's release in flight, so the process's close waits for it. */
type Track = (p: Promise<unknown>) => void;

/**
 * A slot held at `revision`: renewed every RENEW_MS by a revision-checked write until released
 * or handed over. `regain`: one that expired while its holder could not renew, and that nobody
 * took meanwhile, is taken again (the harness's; a spawner's is lost).
 */
function heldSlot(
  kv: KV,
  index: number,
  value: Uint8Array,
  revision: number,
  regain: boolean,
  track: Track,
): FleetSlot {
  let rev = revision;
  let lost = false;
  let done = false;
  let renewing: Promise<void> = Promise.resolve();
  const renew = async (): Promise<void> => {
    try {
      rev = await kv.update(slotKey(index), value, rev);
    } catch (err) {
      // Unreachable: try again on the next beat; the key lives SLOT_TTL_MS past the last one.
      if (!wrongRevision(err)) return;
      // Someone wrote the key since: it expired and was taken, or (a spawner's) the harness adopted it.
      try {
        if (!regain) throw err;
        // Expired while this holder could not renew, and nobody took it: take it again.
        rev = await kv.create(slotKey(index), value);
      } catch {
        lost = true;
        stop();
      }
    }
  };
  const timer = setInterval(() => {
    if (!done) renewing = renew();
  }, RENEW_MS);
  // A held slot never keeps a process alive; the spawner waits on its child, the harness on its work.
  timer.unref();
  const stop = (): void => {
    done = true;
    clearInterval(timer);
  };
  return {
    index,
    lost: () => lost,
    handOver: stop,
    release() {
      if (done) return;
      stop();
      // After any renewal in flight, so the delete names the revision this holder wrote last.
      track(renewing.then(() => (lost ? undefined : kv.delete(slotKey(index), { previousSeq: rev }))));
    },
  };
}
