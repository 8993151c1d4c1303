import { statusWithReason } from '../fleet/record-status.js';
import { FlotillaError } from '../errors.js';
import { recordLiveness } from '../fleet/liveness.js';
import { readRecord } from '../fleet/registry.js';
import type { Layout } from '../layout/layout.js';
import { readOutput } from '../transcript/output.js';
import { resolveKnownAgent } from './resolve.js';

/**
 * `flotilla output <id>` (§2): the final answer of an agent's latest finished task. An agent
 * that has not finished one yet is a clear error (with `flotilla wait` as the way to block).
 */
export function agentOutput(layout: Layout, prefix: string): { id: string; text: string } {
  const id = resolveKnownAgent(layout, prefix);
  const rec = readRecord(layout, id);
  try {
    return { id, text: readOutput(layout, id) };
  } catch (err) {
    if (rec && !(err instanceof FlotillaError && err.code !== 'not-found')) {
      const state = recordLiveness(rec);
      if (state !== 'ended' && !rec.lastTask) {
        throw new FlotillaError(
          `'${id}' has not finished a task yet (${rec.status}) — run 'flotilla wait ${id}' to block until it does`,
          { code: 'not-finished', cause: err },
        );
      }
      if (state === 'ended' && !rec.lastTask) {
        throw new FlotillaError(
          `'${id}' ended ${statusWithReason(rec.status, rec.exitReason)} without a final answer — see 'flotilla transcript ${id}'`,
          { code: 'not-found', cause: err },
        );
      }
    }
    throw err;
  }
}
