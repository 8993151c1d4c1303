import type { Config } from '../config/schema.js';
import type { AgentRecord } from '../fleet/record.js';
import { isTerminal } from '../fleet/record-status.js';
import { readRecord } from '../fleet/registry.js';
import type { Layout } from '../layout/layout.js';
import { sleep } from '../sleep.js';
import { reconcileDead } from './reconcile.js';
import { harnessRunning } from './signal.js';

/**
 * How long `spawn-agent --wait` waits, after a one-shot agent's answer, for its harness to end
 * its record (§5.5): the harness sends the completion first, then ends — a moment's work.
 */
export const RECORD_END_BOUND_MS = 60_000;

const POLL_MS = 25;

/**
 * Waits for agent `id`'s record to end, as a one-shot's harness ends it after its answer: a
 * harness that died meanwhile is reaped here. Returns the ended record, or the live one
 * (`ended: false`) when it is still running after `boundMs`.
 */
export async function awaitRecordEnd(
  layout: Layout,
  config: Config,
  id: string,
  boundMs = RECORD_END_BOUND_MS,
): Promise<{ ended: boolean; record: AgentRecord | undefined }> {
  const end = Date.now() + boundMs;
  for (;;) {
    const rec = readRecord(layout, id);
    if (!rec || isTerminal(rec.status)) return { ended: true, record: rec };
    if (!harnessRunning(rec) && rec.pid !== null) {
      await reconcileDead(layout, config, { ids: [id] });
      const after = readRecord(layout, id);
      if (!after || isTerminal(after.status)) return { ended: true, record: after };
    }
    if (Date.now() >= end) return { ended: false, record: rec };
    await sleep(POLL_MS);
  }
}
