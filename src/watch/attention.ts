import type { AgentRecord } from '../fleet/record.js';

/**
 * What needs a person (docs/design.md §2 "Attention"): an agent waiting on an approval or a
 * secret, one that wrote to you and you have not read it, one that failed or crashed and you
 * have not looked at it yet, and one waiting in line for a running slot. Pure: the dashboard
 * (`n`, the marks, the order), `flotilla next`, the tmux status count and the bell all judge
 * by this one function, so they always agree.
 */

export type NeedKind = 'approval' | 'secret' | 'asks' | 'failed' | 'queued';

export interface Need {
  kind: NeedKind;
  /** What the state column shows instead of the status: `approve?`, `queued #2`. */
  mark: string;
  /** One line saying what to do about it. */
  hint: string;
  /**
   * Names this occurrence: a failure already looked at (the seen mark holds this stamp) does
   * not come back, and a new failure of the same agent (a later task) does; the bell rings
   * for stamps it has not rung for.
   */
  stamp: string;
}

/** The facts about one agent that decide whether it needs you. */
export interface NeedInput {
  record: Pick<AgentRecord, 'id' | 'status' | 'exitReason' | 'finishedAt' | 'lastTask'>;
  /** Its harness is gone but its record is not terminal yet. */
  dead: boolean;
  /** The open approval request it waits on (kind `secret` for a secret request). */
  approval: { requestId: string; kind?: 'secret' | undefined } | null;
  /** Unread messages it wrote to `human`. */
  asks: number;
  /** Its place in line for a running slot (1 = next), or null. */
  queuePosition: number | null;
  /** The stamp of the failure a person has already looked at, or null. */
  seen: string | null;
}

const FAILED = new Set(['failed', 'crashed', 'timed_out', 'refused', 'lost']);

/** Whether this agent needs a person now, and why; null when it does not. */
export function needOf(input: NeedInput): Need | null {
  const { record: r } = input;
  if (input.approval) {
    const secret = input.approval.kind === 'secret';
    return {
      kind: secret ? 'secret' : 'approval',
      mark: secret ? 'secret?' : 'approve?',
      hint: `answer with flotilla approve|deny ${input.approval.requestId}, a/d in the dashboard, y/n in its window`,
      stamp: `approval:${input.approval.requestId}`,
    };
  }
  if (input.asks > 0) {
    return {
      kind: 'asks',
      mark: 'asks you',
      hint: `it wrote to you — read it with 'flotilla inbox'`,
      stamp: `asks:${r.id}:${input.asks}`,
    };
  }
  const failure = failureStamp(r, input.dead);
  if (failure && failure !== input.seen) {
    const why = input.dead
      ? 'its process is gone'
      : (r.status === 'idle' ? r.lastTask?.exitReason : r.exitReason) || 'no reason recorded';
    return {
      kind: 'failed',
      mark: input.dead ? 'crashed' : r.status === 'idle' ? 'idle ✗' : r.status,
      hint: `${why} — read it with 'flotilla transcript ${r.id}'`,
      stamp: failure,
    };
  }
  if (r.status === 'queued' || input.queuePosition !== null) {
    const at = input.queuePosition;
    return {
      kind: 'queued',
      mark: at ? `queued #${at}` : 'queued',
      hint: 'waiting for a running slot — raise limits.max_running, or end an agent to free one',
      stamp: `queued:${r.id}`,
    };
  }
  return null;
}

/**
 * The stamp of the agent's failure, or null when it has none: an ended agent that failed,
 * crashed, timed out or was refused; a harness that died; a persistent agent whose last task
 * failed. A person looking at it writes this stamp as seen (`markSeen`).
 */
export function failureStamp(r: NeedInput['record'], dead: boolean): string | null {
  if (dead) return `dead:${r.id}`;
  if (FAILED.has(r.status)) return `${r.status}:${r.finishedAt ?? ''}`;
  if (r.status === 'idle' && r.lastTask && r.lastTask.status !== 'completed' && r.lastTask.status !== 'cancelled')
    return `task:${r.lastTask.task}`;
  return null;
}

const RANK: Record<NeedKind, number> = { approval: 0, secret: 0, asks: 1, failed: 2, queued: 3 };

/**
 * The rows that need a person first — questions that block an agent, then mail for you,
 * then failures, then the line for slots in its order — each group in its given order;
 * then every other row in its given order.
 */
export function attentionFirst<T extends { need: Need | null; queuePosition: number | null }>(rows: readonly T[]): T[] {
  const needy = rows.map((row, i) => ({ row, i })).filter((x) => x.row.need);
  needy.sort(
    (a, b) =>
      RANK[a.row.need!.kind] - RANK[b.row.need!.kind] ||
      (a.row.queuePosition ?? 0) - (b.row.queuePosition ?? 0) ||
      a.i - b.i,
  );
  return [...needy.map((x) => x.row), ...rows.filter((r) => !r.need)];
}

/** How many of these rows need a person. */
export function needCount(rows: readonly { need: Need | null }[]): number {
  return rows.reduce((n, r) => n + (r.need ? 1 : 0), 0);
}

/**
 * The one after `currentId` among the rows that need a person (the first when `currentId`
 * is none of them), wrapping round: `n` in the dashboard and `flotilla next`.
 */
export function nextNeedy<T extends { id: string; need: Need | null }>(
  rows: readonly T[],
  currentId: string | null,
): T | undefined {
  const needy = rows.filter((r) => r.need);
  if (needy.length === 0) return undefined;
  const at = currentId === null ? -1 : needy.findIndex((r) => r.id === currentId);
  return needy[(at + 1) % needy.length];
}
