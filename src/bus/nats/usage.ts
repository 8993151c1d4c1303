import type { KV } from '@nats-io/kv';

import type { AgentRecord } from '../../fleet/record.js';
import { lastValues, type ReadSource } from './last-values.js';

/**
 * An ended agent's final usage kept in the fleet's trees bucket (§11, §18): the key
 * `usage.<root>.<agent>`, created once (a second writer's create fails: never counted twice).
 * Kept before the record leaves the live keys (records.ts), so a tree's agents are its live
 * records plus these keys: the budget check and list_agents read one tree, never the
 * fleet's whole history. `flotilla gc` removes a tree's keys once no record of it is left.
 */

/** An ended agent's final usage as kept, with the host it ran on. */
export interface KeptUsage {
  tokens: number;
  costUsd: number;
  host: string | null;
}

export const usageKey = (rootId: string, agentId: string): string => `usage.${rootId}.${agentId}`;

/** Keeps `rec`'s final usage once; a key already there (another writer's) stays as it is. */
export async function keepUsage(
  kv: KV,
  rec: Pick<AgentRecord, 'id' | 'rootId' | 'usage' | 'host'>,
  self: string,
): Promise<void> {
  const usage: KeptUsage = {
    tokens: rec.usage.inputTokens + rec.usage.outputTokens,
    costUsd: rec.usage.costUsd ?? 0,
    host: rec.host ?? self,
  };
  try {
    await kv.create(usageKey(rec.rootId, rec.id), JSON.stringify(usage));
  } catch (err) {
    // JetStream's "wrong last sequence" (10071) or its "unknown" form (10164): the key has a value.
    const code = (err as { code?: unknown }).code;
    const taken = err instanceof Error && (code === 10071 || code === 10164);
    if (!taken) throw err;
  }
}

/**
 * The usage kept for one tree's ended agents, by agent id: one value per ended agent of that tree (a bucket not made
 * yet: none).
 */
export async function keptUsage(
  link: ReadSource,
  treesBucket: string,
  rootId: string,
): Promise<Map<string, KeptUsage>> {
  const out = new Map<string, KeptUsage>();
  const prefix = `usage.${rootId}.`;
  for (const e of await lastValues(link, treesBucket, `${prefix}>`)) {
    try {
      out.set(e.key.slice(prefix.length), JSON.parse(new TextDecoder().decode(e.value)) as KeptUsage);
    } catch {
      // Not a usage value: not counted.
    }
  }
  return out;
}
