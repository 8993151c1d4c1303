import { isProcessAlive } from './proc.js';
import { isTerminal } from './record-status.js';
import type { AgentRecord } from './record.js';

/**
 * Whether a record stands for a running agent (§3): `ended` (terminal status), `pending`
 * (not terminal, no pid yet: a spawner is opening it right now), `live` (its pid runs and
 * started at `pidStartTime`, so a reused pid never counts) or `dead` (crashed, not yet reaped).
 */
export type Liveness = 'live' | 'pending' | 'dead' | 'ended';

type LivenessFields = Pick<AgentRecord, 'status' | 'pid' | 'pidStartTime'>;

export function recordLiveness(rec: LivenessFields): Liveness {
  if (isTerminal(rec.status)) return 'ended';
  if (rec.pid === null) return 'pending';
  return isProcessAlive(rec.pid, rec.pidStartTime) ? 'live' : 'dead';
}

/** True for a record whose harness process runs now (start time checked). */
export function isRecordLive(rec: LivenessFields): boolean {
  return recordLiveness(rec) === 'live';
}
