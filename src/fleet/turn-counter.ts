import type { AgentRecord } from './record.js';

type Counted = Pick<AgentRecord, 'runtime' | 'turns' | 'taskTurns' | 'maxTurns'>;

/**
 * The turns shown beside an agent (pane, `status`, dashboard): the current task's turns
 * against max_turns, which bounds each task (§5.9), so the count never passes its limit. A
 * lifetime count against a per-task limit read `turn 13/10`. A vendor CLI counts its own
 * turns and takes no limit from us: its count alone, with no limit beside it.
 */
export function turnCounter(rec: Counted): { turns: number; limit: number | null } {
  return rec.runtime === 'flotilla' ? { turns: rec.taskTurns, limit: rec.maxTurns } : { turns: rec.turns, limit: null };
}

/** `3/10`, or `7` for a vendor CLI. */
export function formatTurns(rec: Counted): string {
  const { turns, limit } = turnCounter(rec);
  return limit === null ? String(turns) : `${turns}/${limit}`;
}
