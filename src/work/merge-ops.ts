import { FlotillaError } from '../errors.js';
import { isBelow } from '../fleet/lineage.js';
import type { AgentRecord } from '../fleet/record.js';
import { resolveAgent } from '../fleet/registry.js';
import type { Layout } from '../layout/layout.js';
import type { MergeWorkOperations } from '../tools/merge-work.js';
import { mergeWork } from './merge.js';

/**
 * merge_work's operations for one agent (our harness and `flotilla mcp`): `flotilla merge`
 * for its own descendants only — a lead takes the work it delegated, never another tree's.
 */
export function mergeWorkOps(
  layout: Layout,
  rec: AgentRecord,
  env: NodeJS.ProcessEnv = process.env,
): MergeWorkOperations {
  return {
    async merge(prefix, opts) {
      const target = resolveAgent(layout, prefix);
      if (!isBelow(layout, target, rec.id)) {
        throw new FlotillaError(
          `'${target.id}' is not one of your agents — you may merge only the work of agents you spawned (and theirs); a person merges the rest with flotilla merge ${target.id}`,
          { code: 'not-yours' },
        );
      }
      return mergeWork(layout, target, { commit: opts.commit, env });
    },
  };
}

/** The same for a person (an MCP client outside any agent): every agent's work, as at a shell. */
export function personMergeWorkOps(layout: Layout, env: NodeJS.ProcessEnv = process.env): MergeWorkOperations {
  return { merge: (prefix, opts) => mergeWork(layout, resolveAgent(layout, prefix), { commit: opts.commit, env }) };
}
