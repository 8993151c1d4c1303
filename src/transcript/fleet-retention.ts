import type { Config } from '../config/schema.js';
import { recordLiveness } from '../fleet/liveness.js';
import { liveRecords } from '../fleet/live.js';
import type { Layout } from '../layout/layout.js';
import { applyRetention, type RetentionResult } from './retention.js';

/**
 * Applies `transcripts.max_files` and `output.retention_secs` (§8) to the fleet: called on
 * each spawn (src/spawn/prepare.ts) and by `flotilla gc`. Anything of an agent whose record
 * is not terminal — running, still starting, or dead but not yet reaped — is kept: only the
 * reaper may decide such an agent has ended. Never throws; problems are in the result.
 */
export function applyFleetRetention(
  layout: Layout,
  config: Pick<Config, 'transcripts' | 'output'>,
  now = Date.now(),
): RetentionResult {
  let notEnded: Set<string>;
  try {
    notEnded = new Set(
      liveRecords(layout)
        .filter((r) => recordLiveness(r) !== 'ended')
        .map((r) => r.id),
    );
  } catch (err) {
    // Without the registry we cannot tell live from finished: delete nothing.
    return { transcripts: [], outputs: [], problems: [`cannot list the registry: ${(err as Error).message}`] };
  }
  return applyRetention(layout, {
    maxFiles: config.transcripts.max_files,
    outputRetentionSecs: config.output.retention_secs,
    isLive: (id) => notEnded.has(id),
    now,
  });
}
