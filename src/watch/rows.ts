import type { AgentRecord, AgentStatus } from '../fleet/record.js';
import type { Liveness } from '../fleet/liveness.js';
import { elapsedMs, secretGrantsText, treeOrder } from '../fleet/status-view.js';
import { byCodeUnit } from '../compare.js';
import { turnCounter } from '../fleet/turn-counter.js';
import { attentionFirst, needCount, needOf, type Need } from './attention.js';
import type { TaskRow } from './tasks.js';

/**
 * The dashboard's data (§2 `flotilla watch`): registry records plus unread counts and pending
 * approvals, turned into rows in tree order. Pure: everything it needs is passed in, so the
 * tests feed it plain objects and the clock. Order, elapsed time and token counts are
 * `flotilla status`'s own (src/fleet/status-view.ts), so both always agree.
 */

/** An approval request a person has not answered yet (from the human inbox). */
export interface PendingApproval {
  requestId: string;
  agentId: string;
  tool: string;
  /** One line a person can judge: `lead-3kd9p1 asks to run $ npm publish`. */
  summary: string;
  timestamp: string;
  /**
   * `secret` for a secret request (§11): answered over its socket, so `a` reads the value in the dashboard's process.
   */
  kind?: 'secret';
  key?: string;
  ttlSecs?: number;
}

/** What one agent looks like on the dashboard. */
export interface WatchRow {
  id: string;
  name: string;
  depth: number;
  /** Tree drawing before the id: `""` for a root, `"├ "`, `"│ └ "` … below. */
  branch: string;
  status: AgentStatus;
  /** The state as shown: the status, or `idle ✓` / `idle ✗` once a persistent agent's task ended. */
  state: string;
  /** How to colour the state. */
  tone: 'live' | 'waiting' | 'idle' | 'ok' | 'bad' | 'muted';
  /** The harness process is gone but the record is not terminal (not reaped yet). */
  dead: boolean;
  /**
   * The current task's turns, against maxTurns (per task); 0 maxTurns: a vendor CLI, no limit (fleet/turn-counter.ts).
   */
  turns: number;
  maxTurns: number;
  tokens: number;
  costUsd: number | null;
  elapsedMs: number;
  unread: number;
  lastLine: string;
  model: string;
  scripted: boolean;
  /** What runs it: `flotilla`, or a vendor CLI (§13). */
  runtime: string;
  approval: PendingApproval | null;
  /** Live secret grants with time left (`github-token 1m 58s`), or ''. */
  secrets: string;
  /** Its file leases (§16): `⚿ src/a.ts` while it holds some, `⧗ src/a.ts (held by x)` while it waits, or ''. */
  leases?: string;
  /** A worktree agent's branch and ahead/behind its base: `⎇ flotilla/x ↑2 ↓1` (work/standing.ts), or ''. */
  work?: string;
  /** Where its window is, for attach. */
  tmux: AgentRecord['tmux'];
  pid: number | null;
  /** Why it needs a person now (attention.ts), or null. */
  need: Need | null;
  /** Its place in line for a running slot (1 = next), or null. */
  queuePosition: number | null;
  /** A `spawn-agent --queue` still waiting for a slot: no registry record yet. */
  pending: boolean;
  /** The other host that runs it (§17.6: read from the bus); absent for this host's agents. */
  host?: string;
}

export interface Snapshot {
  rows: WatchRow[];
  /** Unread messages for people (`inbox/human/new`). */
  humanUnread: number;
  approvals: PendingApproval[];
  /** How many rows need a person (they come first). */
  needs: number;
  /** The fleet's schedules, a title line then one line each (src/schedule/status-lines.ts); absent without any. */
  schedules?: string[];
  /** The boards' tasks for the tasks view (`t`, watch/tasks.ts); absent without a board. */
  tasks?: TaskRow[];
  /**
   * On a bus (§17.6): each host's heading, this host's first, each before its rows (host-rows.ts); absent on `maildir`.
   */
  hosts?: HostSection[];
}

/** A host's heading on the dashboard: its rows are `count` rows of `Snapshot.rows` from `first`. */
export interface HostSection {
  host: string;
  /** `flotilla status`'s heading: `Host r1 — heartbeat 2 s ago`, `… LOST: no heartbeat for 45 s`. */
  heading: string;
  lost: boolean;
  first: number;
  count: number;
}

export interface RowInputs {
  records: readonly AgentRecord[];
  /** Unread count per agent id (files in its new/). */
  unread: ReadonlyMap<string, number>;
  approvals: readonly PendingApproval[];
  liveness: (rec: AgentRecord) => Liveness;
  now: number;
  humanUnread?: number;
  /** The line for running slots (slot-queue.ts `queueLine`): agent id → place, and spawns not yet in the registry. */
  queue?: readonly { agentId: string | null; pid: number; position: number }[];
  /** Unread messages each agent wrote to `human`. */
  asks?: ReadonlyMap<string, number>;
  /** The failure stamp a person has looked at, per agent (attention.ts). */
  seen?: ReadonlyMap<string, string>;
  /** Each agent's file-lease mark (leases/summary.ts `leaseMarks`). */
  leases?: ReadonlyMap<string, string>;
  /** Each worktree agent's branch mark (work/standing.ts `standingMark`). */
  work?: ReadonlyMap<string, string>;
}

/**
 * Rows that need a person first (attention.ts: approvals, mail for you, failures, the line
 * for slots — shown without tree drawing), then the rest in tree order (`flotilla status`'s
 * order): each root oldest first, then its children depth-first.
 */
export function buildSnapshot(input: RowInputs): Snapshot {
  const approvalsByAgent = new Map<string, PendingApproval>();
  for (const a of input.approvals) approvalsByAgent.set(a.agentId, a);
  const place = new Map<string, number>();
  for (const q of input.queue ?? []) if (q.agentId) place.set(q.agentId, q.position);
  const ordered = treeOrder(input.records.map((record) => ({ record })));
  const tree = ordered.map(({ entry, level }) => ({
    row: toRow(entry.record, input, approvalsByAgent.get(entry.record.id) ?? null, place.get(entry.record.id) ?? null),
    level,
  }));
  const known = new Set(input.records.map((r) => r.id));
  const waiting = (input.queue ?? [])
    .filter((q) => q.agentId && !known.has(q.agentId))
    .map((q) => pendingRow(q.agentId!, q.pid, q.position));
  const sorted = attentionFirst([...tree.map((t) => t.row), ...waiting]);
  // The rest keep their tree drawing, computed over the rows left in the tree.
  const rest = tree.filter((t) => !t.row.need);
  const branches = treeBranches(rest.map((t) => t.level));
  const branchOf = new Map(rest.map((t, i) => [t.row.id, branches[i]!]));
  const rows = sorted.map((r) => ({ ...r, branch: branchOf.get(r.id) ?? '' }));
  return { rows, humanUnread: input.humanUnread ?? 0, approvals: [...input.approvals], needs: needCount(rows) };
}

/** A `spawn-agent --queue` waiting for a slot: its id is chosen, its record not written yet. */
function pendingRow(id: string, pid: number, position: number): WatchRow {
  const row: WatchRow = {
    id,
    name: id.replace(/-[a-z0-9]{6}$/, ''),
    depth: 0,
    branch: '',
    status: 'queued',
    state: 'queued',
    tone: 'waiting',
    dead: false,
    turns: 0,
    maxTurns: 0,
    tokens: 0,
    costUsd: null,
    elapsedMs: 0,
    unread: 0,
    lastLine: `spawn-agent --queue (pid ${pid}): not started, waiting for a running slot`,
    model: '',
    scripted: false,
    runtime: 'flotilla',
    approval: null,
    secrets: '',
    leases: '',
    tmux: null,
    pid,
    need: null,
    queuePosition: position,
    pending: true,
  };
  row.need = needOf({
    record: { id, status: 'queued', exitReason: null, finishedAt: null, lastTask: null },
    dead: false,
    approval: null,
    asks: 0,
    queuePosition: position,
    seen: null,
  });
  row.state = row.need?.mark ?? 'queued';
  return row;
}

/**
 * Tree drawing for rows in depth-first order given their levels: `├ ` / `└ ` before a
 * child, `│ ` where an ancestor has later siblings.
 */
export function treeBranches(levels: readonly number[]): string[] {
  // Whether another row at `level` follows row i before the tree climbs above that level.
  const more = (i: number, level: number): boolean => {
    for (let j = i + 1; j < levels.length; j++) {
      if (levels[j]! < level) return false;
      if (levels[j] === level) return true;
    }
    return false;
  };
  return levels.map((level, i) => {
    if (level === 0) return '';
    let out = '';
    for (let l = 1; l < level; l++) out += more(i, l) ? '│ ' : '  ';
    return out + (more(i, level) ? '├ ' : '└ ');
  });
}

/** One agent as the dashboard shows it (the rest of its row: tree drawing, order, comes from buildSnapshot). */
export function toRow(
  rec: AgentRecord,
  input: RowInputs,
  approval: PendingApproval | null,
  queuePosition: number | null,
): WatchRow {
  const liveness = input.liveness(rec);
  const { state, tone } = stateOf(rec, liveness === 'dead');
  // A place in line counts only while the agent waits for new work, not after it got its slot.
  const position = rec.status === 'queued' ? queuePosition : null;
  const need = needOf({
    record: rec,
    dead: liveness === 'dead',
    approval,
    asks: input.asks?.get(rec.id) ?? 0,
    queuePosition: position,
    seen: input.seen?.get(rec.id) ?? null,
  });
  return {
    id: rec.id,
    name: rec.name,
    depth: rec.depth,
    branch: '',
    status: rec.status,
    state: need?.kind === 'queued' || need?.kind === 'asks' ? need.mark : state,
    tone: need && tone !== 'bad' ? 'waiting' : tone,
    dead: liveness === 'dead',
    turns: turnCounter(rec).turns,
    maxTurns: turnCounter(rec).limit ?? 0,
    tokens: rec.usage.inputTokens + rec.usage.outputTokens,
    costUsd: rec.usage.costUsd,
    elapsedMs: elapsedMs(rec, input.now),
    unread: input.unread.get(rec.id) ?? 0,
    lastLine: rec.lastLine,
    model: rec.model,
    scripted: rec.scripted,
    runtime: rec.runtime,
    approval,
    secrets: secretGrantsText(rec, input.now),
    leases: input.leases?.get(rec.id) ?? '',
    work: input.work?.get(rec.id) ?? '',
    tmux: rec.tmux,
    pid: rec.pid,
    need,
    queuePosition: position,
    pending: false,
  };
}

/** The state a person reads: a persistent agent that finished its task is `idle ✓` (or `idle ✗`). */
export function stateOf(
  rec: Pick<AgentRecord, 'status' | 'lastTask'>,
  dead = false,
): { state: string; tone: WatchRow['tone'] } {
  const s = rec.status;
  if (dead) return { state: `${s}†`, tone: 'bad' };
  if (s === 'completed') return { state: s, tone: 'ok' };
  if (s === 'failed' || s === 'crashed' || s === 'refused' || s === 'timed_out' || s === 'lost')
    return { state: s, tone: 'bad' };
  if (s === 'cancelled') return { state: s, tone: 'muted' };
  if (s === 'waiting_approval') return { state: 'approval?', tone: 'waiting' };
  // Work arrived while every running slot was busy; its last line says `waiting for a slot N/M`.
  if (s === 'queued') return { state: 'queued', tone: 'waiting' };
  if (s === 'idle' && rec.lastTask) {
    return rec.lastTask.status === 'completed' ? { state: 'idle ✓', tone: 'ok' } : { state: 'idle ✗', tone: 'bad' };
  }
  if (s === 'idle') return { state: s, tone: 'idle' };
  if (s === 'working') return { state: s, tone: 'live' };
  return { state: s, tone: 'muted' };
}

/**
 * Which approval requests are still open: the latest request of each agent that is now
 * `waiting_approval`, whose answer file has not been written yet. Older requests of the same
 * agent were answered (or timed out) before it could ask again.
 */
export function pendingApprovals(
  requests: readonly PendingApproval[],
  statusOf: (agentId: string) => AgentStatus | undefined,
  answered: (requestId: string) => boolean,
): PendingApproval[] {
  const latest = new Map<string, PendingApproval>();
  for (const r of requests) {
    const prev = latest.get(r.agentId);
    if (
      !prev ||
      byCodeUnit(prev.timestamp, r.timestamp) < 0 ||
      (prev.timestamp === r.timestamp && prev.requestId < r.requestId)
    )
      latest.set(r.agentId, r);
  }
  return [...latest.values()]
    .filter((r) => statusOf(r.agentId) === 'waiting_approval' && !answered(r.requestId))
    .sort((a, b) => byCodeUnit(a.timestamp, b.timestamp));
}

/** True when two snapshots would draw the same screen (so the dashboard need not render). */
export function sameSnapshot(a: Snapshot, b: Snapshot, elapsedText: (ms: number) => string): boolean {
  if (
    a.humanUnread !== b.humanUnread ||
    a.needs !== b.needs ||
    a.rows.length !== b.rows.length ||
    a.approvals.length !== b.approvals.length
  )
    return false;
  if (JSON.stringify(a.hosts) !== JSON.stringify(b.hosts)) return false;
  for (let i = 0; i < a.rows.length; i++) {
    const x = a.rows[i]!;
    const y = b.rows[i]!;
    if (elapsedText(x.elapsedMs) !== elapsedText(y.elapsedMs)) return false;
    const { elapsedMs: _x, approval: ax, tmux: tx, need: nx, ...restX } = x;
    const { elapsedMs: _y, approval: ay, tmux: ty, need: ny, ...restY } = y;
    if ((nx?.stamp ?? null) !== (ny?.stamp ?? null) || (nx?.mark ?? null) !== (ny?.mark ?? null)) return false;
    if (JSON.stringify(restX) !== JSON.stringify(restY)) return false;
    if ((ax?.requestId ?? null) !== (ay?.requestId ?? null)) return false;
    if (JSON.stringify(tx) !== JSON.stringify(ty)) return false;
  }
  return a.approvals.every((p, i) => p.requestId === b.approvals[i]?.requestId);
}
