import type { KV } from '@nats-io/kv';
import { JetStreamApiCodes, JetStreamApiError } from '@nats-io/jetstream';
import { refusal } from '../../errors.js';
import { recordLiveness } from '../../fleet/liveness.js';
import { isProcessAlive, selfProcess } from '../../fleet/proc.js';
import { isTerminal } from '../../fleet/record-status.js';
import type { AgentRecord } from '../../fleet/record.js';
import type { CapsBus, ChildPlace } from '../../fleet/caps-port.js';
import type { HostBeat, RecordsBus } from '../types.js';
import { keepUsage, type KeptUsage } from './usage.js';

/**
 * A parent's children and a tree's budget counted over every host of a `nats://` fleet (§5.2,
 * §11, §18; docs/decisions-hosts.md "Caps on the bus"), in the fleet's trees bucket beside the
 * trees' spawn numbers:
 * - `child.<parent>.<n>`, n in 0..max_children-1, is one of the parent's places, taken by a
 *   KV `create` for the child being spawned — the server grants a key to exactly one writer,
 *   so two hosts admitting the parent's last child at once cannot both win. The place is
 *   given back when the child ends (`ended`, by whichever process of its host writes its
 *   end), and, should that never happen (a host switched off, a SIGKILLed spawner), a
 *   spawner that finds every place held asks whether each holder still counts: its record
 *   not ended, and its host's heartbeat standing for the pid another host cannot check.
 * - `usage.<root>.<agent>` is an ended agent's final usage, created once (usage.ts). A tree's
 *   usage is those plus its live records: never the fleet's ended history.
 */

/** Who holds a place: the child, its host, and the spawner that took it (pid and start time). */
interface PlaceValue {
  agent: string;
  host: string;
  pid: number;
  start: string | null;
}

/** Longer than any spawner takes from taking a place to putting the child's first record on the bus. */
const SPAWN_WRITE_GRACE_MS = 60_000;

const childPrefix = (parentId: string): string => `child.${parentId}`;

function wrongRevision(err: unknown): boolean {
  return (
    err instanceof JetStreamApiError &&
    (err.code === JetStreamApiCodes.StreamWrongLastSequence ||
      err.code === JetStreamApiCodes.StreamWrongLastSequenceUnknown)
  );
}

function parse<T>(data: Uint8Array): T | null {
  try {
    return JSON.parse(new TextDecoder().decode(data)) as T;
  } catch {
    return null;
  }
}

async function createOnce(kv: KV, key: string, value: string): Promise<number | null> {
  try {
    return await kv.create(key, value);
  } catch (err) {
    if (wrongRevision(err)) return null;
    throw err;
  }
}

async function deleteAt(kv: KV, key: string, revision: number): Promise<void> {
  await kv.delete(key, { previousSeq: revision }).catch((err: unknown) => {
    if (!wrongRevision(err)) throw err;
  });
}

/**
 * Whether the child holding a place still counts against its parent: on its own host, as
 * fleet/caps.ts counts (`live` or `pending`; no record yet: while its spawner runs); on
 * another host, while its record has not ended and that host beats within its
 * `lost_after_secs` (a record not on the bus yet: for SPAWN_WRITE_GRACE_MS).
 */
function placeJudge(
  records: Pick<RecordsBus, 'get' | 'hosts'>,
  self: string,
): (held: PlaceValue, takenAt: Date) => Promise<boolean> {
  let beats: Promise<Map<string, HostBeat>> | undefined;
  const hostLost = async (host: string): Promise<boolean> => {
    beats ??= records.hosts().then((all) => new Map(all.map((b) => [b.host, b])));
    return (await beats).get(host)?.lost ?? false;
  };
  return async (held, takenAt) => {
    const rec = await records.get(held.agent);
    if (held.host === self)
      return rec ? ['live', 'pending'].includes(recordLiveness(rec)) : isProcessAlive(held.pid, held.start);
    if (rec && isTerminal(rec.status)) return false;
    if (await hostLost(held.host)) return false;
    return rec !== undefined || Date.now() - takenAt.getTime() < SPAWN_WRITE_GRACE_MS;
  };
}

export type TreeCaps = Pick<CapsBus, 'claimChild' | 'ended' | 'treeUsageElsewhere'>;

export function natsTreeCaps(
  /** One exchange with the trees bucket (the bus-unreachable refusal when it cannot answer). */
  ask: <T>(fn: (trees: KV) => Promise<T>) => Promise<T>,
  self: string,
  records: () => Promise<RecordsBus>,
  /** Keeps a write in flight until the bus's close. */
  track: (p: Promise<unknown>) => void,
): TreeCaps {
  const claimChild = (parentId: string, max: number, childId: string): Promise<ChildPlace> =>
    ask(async (kv) => {
      const value = JSON.stringify({
        agent: childId,
        host: self,
        pid: selfProcess().pid,
        start: selfProcess().start,
      } satisfies PlaceValue);
      const taken = new Set<string>();
      for await (const k of await kv.keys(`${childPrefix(parentId)}.*`)) taken.add(k);
      const place = (key: string, rev: number): ChildPlace => {
        let done = false;
        return {
          release() {
            if (!done) {
              done = true;
              track(deleteAt(kv, key, rev));
            }
          },
        };
      };
      // A free number first; a racing claim settles on create.
      for (let n = 0; n < max; n++) {
        const key = `${childPrefix(parentId)}.${n}`;
        if (taken.has(key)) continue;
        const rev = await createOnce(kv, key, value);
        if (rev !== null) return place(key, rev);
      }
      // Every place held: a holder that no longer counts (ended, its host lost, its spawner dead) gives it up.
      const stillLive = placeJudge(await records(), self);
      let live = 0;
      for (let n = 0; n < max; n++) {
        const key = `${childPrefix(parentId)}.${n}`;
        const entry = await kv.get(key);
        const held = entry?.operation === 'PUT' ? parse<PlaceValue>(entry.value) : null;
        if (entry && held && (await stillLive(held, entry.created))) {
          live++;
          continue;
        }
        if (entry?.operation === 'PUT') await deleteAt(kv, key, entry.revision);
        const rev = await createOnce(kv, key, value);
        if (rev !== null) return place(key, rev);
        live++;
      }
      throw refusal(
        'children-limit',
        `spawn refused: '${parentId}' already has ${live} live children (limits.max_children ${max}) — wait for one to finish (flotilla wait), or raise limits.max_children`,
        { parent: parentId, children: live, max },
      );
    });

  const ended: TreeCaps['ended'] = async (rec) => {
    await ask(async (kv) => {
      await keepUsage(kv, rec, self);
      if (!rec.parentId) return;
      for await (const key of await kv.keys(`${childPrefix(rec.parentId)}.*`)) {
        const entry = await kv.get(key);
        if (entry?.operation === 'PUT' && parse<PlaceValue>(entry.value)?.agent === rec.id)
          await deleteAt(kv, key, entry.revision);
      }
    });
  };

  // The tree's live records on other hosts and its ended agents' kept usage (RecordsBus.tree): flat in the fleet's
  // history.
  const treeUsageElsewhere: TreeCaps['treeUsageElsewhere'] = (rootId) =>
    ask(async () => {
      const tree = await (await records()).tree(rootId);
      return sumUsage(tree.ended, tree.live);
    });

  return { claimChild, ended, treeUsageElsewhere };
}

/**
 * Each agent of the tree once, on other hosts: a live record's usage is current; an ended one's is its final usage as
 * kept.
 */
function sumUsage(
  kept: ReadonlyMap<string, KeptUsage>,
  live: readonly AgentRecord[],
): { tokens: number; costUsd: number } {
  const each = new Map<string, Pick<KeptUsage, 'tokens' | 'costUsd'>>(kept);
  // A kept usage is the agent's final one: its live record can still be one from before its
  // end (its host keeps the usage and moves the record in two writes), and never counts over it.
  for (const r of live) {
    if (each.has(r.id)) continue;
    each.set(r.id, { tokens: r.usage.inputTokens + r.usage.outputTokens, costUsd: r.usage.costUsd ?? 0 });
  }
  let tokens = 0;
  let costUsd = 0;
  for (const u of each.values()) {
    tokens += u.tokens;
    costUsd += u.costUsd;
  }
  return { tokens, costUsd };
}
