/**
 * The agent status machine (§3) and other record helpers that need no schema: kept apart
 * from the zod schema in record.ts so that `status`, `send` and the registry load no zod.
 */

/** Agent states (§3). Terminal states never change. */
export const AGENT_STATUSES = [
  'spawning',
  'starting',
  'working',
  'idle',
  'waiting_approval',
  /** Work arrived while every running slot was busy: waiting in line for one (§5.2). */
  'queued',
  'completed',
  'failed',
  'cancelled',
  'timed_out',
  'crashed',
  'refused',
  /** Its host stopped beating past its `lost_after_secs`: ended by the fleet, not by its harness (§17.8). */
  'lost',
] as const;
export type AgentStatus = (typeof AGENT_STATUSES)[number];

export const TERMINAL_STATUSES: ReadonlySet<AgentStatus> = new Set([
  'completed',
  'failed',
  'cancelled',
  'timed_out',
  'crashed',
  'refused',
  'lost',
]);

export function isTerminal(status: AgentStatus): boolean {
  return TERMINAL_STATUSES.has(status);
}

/** Live states may move among themselves as the design's arrows allow; any may end. */
const NEXT: Record<AgentStatus, readonly AgentStatus[]> = {
  spawning: ['starting'],
  starting: ['working', 'idle', 'queued'],
  working: ['idle', 'waiting_approval'],
  idle: ['working', 'waiting_approval', 'queued'],
  waiting_approval: ['working', 'idle'],
  queued: ['working', 'idle'],
  completed: [],
  failed: [],
  cancelled: [],
  timed_out: [],
  crashed: [],
  refused: [],
  lost: [],
};

/** True when `from → to` is a legal move of the status machine (staying put is legal for live states). */
export function canTransition(from: AgentStatus, to: AgentStatus): boolean {
  if (isTerminal(from)) return false;
  if (from === to) return true;
  return isTerminal(to) || NEXT[from].includes(to);
}

/** Trims a line of output for `lastLine` (≤ 500 chars, one line). */
export function toLastLine(text: string): string {
  const lines = text
    .split('\n')
    .map((l) => l.trim())
    .filter(Boolean);
  const last = lines.at(-1) ?? '';
  return last.length > 500 ? last.slice(0, 499) + '…' : last;
}

/**
 * A status with why it ended, for one line a person reads: `cancelled (SIGTERM)`. A reason
 * that already starts with the status is shown alone, so it never reads
 * `cancelled (cancelled (SIGTERM))`; no reason, or the status again, is the status.
 */
export function statusWithReason(status: string, reason: string | null | undefined): string {
  if (!reason || reason === status) return status;
  if (reason.startsWith(`${status} `) || reason.startsWith(`${status}:`)) return reason;
  return `${status} (${reason})`;
}
