import type { AgentRecord } from './record.js';
import { isTerminal } from './record-status.js';
import { byCodeUnit } from '../compare.js';
import { formatTurns } from './turn-counter.js';

/**
 * The agent tree as text (§2 `flotilla status`): pure functions over records, shared with
 * the live dashboard. Children sit under their parent, indented by depth; a record whose
 * parent is gone is shown as a root.
 */

export interface StatusEntry {
  record: AgentRecord;
  /** Messages in the agent's new/ (mail nobody has read yet). */
  unread: number;
  /** Its place in line for a running slot (1 = next) while it is `queued`. */
  queuePosition?: number | null | undefined;
  /** A worktree agent's branch and ahead/behind its base (work/standing.ts `standingMark`), or absent. */
  work?: string | undefined;
}

/** Depth-first order: each root (oldest first), then its children (oldest first), recursively. */
export function treeOrder<T extends { record: AgentRecord }>(entries: readonly T[]): { entry: T; level: number }[] {
  const ids = new Set(entries.map((e) => e.record.id));
  const children = new Map<string, T[]>();
  const roots: T[] = [];
  for (const e of [...entries].sort(
    (a, b) => byCodeUnit(a.record.createdAt, b.record.createdAt) || byCodeUnit(a.record.id, b.record.id),
  )) {
    const p = e.record.parentId;
    if (p && ids.has(p) && p !== e.record.id) children.set(p, [...(children.get(p) ?? []), e]);
    else roots.push(e);
  }
  const out: { entry: T; level: number }[] = [];
  const seen = new Set<string>();
  const visit = (e: T, level: number): void => {
    if (seen.has(e.record.id)) return;
    seen.add(e.record.id);
    out.push({ entry: e, level });
    for (const c of children.get(e.record.id) ?? []) visit(c, level + 1);
  };
  for (const r of roots) visit(r, 0);
  return out;
}

/** 950, 12.3k, 4.1M */
export function formatTokens(n: number): string {
  if (n < 1000) return String(n);
  if (n < 1_000_000) return `${(n / 1000).toFixed(n < 10_000 ? 1 : 0)}k`;
  return `${(n / 1_000_000).toFixed(1)}M`;
}

/** 850ms, 12s, 3m04s, 2h05m */
export function formatElapsedMs(ms: number): string {
  if (ms < 1000) return `${Math.max(0, Math.round(ms))}ms`;
  const s = Math.floor(ms / 1000);
  if (s < 60) return `${s}s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m}m${String(s % 60).padStart(2, '0')}s`;
  return `${Math.floor(m / 60)}h${String(m % 60).padStart(2, '0')}m`;
}

/** Time since the agent started (or was created), up to when it finished. */
export function elapsedMs(rec: AgentRecord, now = Date.now()): number {
  const from = Date.parse(rec.startedAt ?? rec.createdAt);
  const to = rec.finishedAt ? Date.parse(rec.finishedAt) : now;
  return Math.max(0, to - from);
}

/**
 * Live secret grants with their time left (§11): `github-token 1m 58s`. Key names only;
 * an ended agent holds nothing, whatever its record still says (SIGKILL leaves it unwritten).
 */
export function secretGrantsText(rec: AgentRecord, now = Date.now()): string {
  if (isTerminal(rec.status)) return '';
  return rec.secretGrants
    .filter((g) => Date.parse(g.expiresAt) > now)
    .map((g) => `${g.key} ${formatElapsedMs(Date.parse(g.expiresAt) - now)}`)
    .join(', ');
}

export const STATUS_COLUMNS = [
  'AGENT',
  'STATE',
  'DEPTH',
  'TURNS',
  'TOKENS',
  'COST',
  'ELAPSED',
  'UNREAD',
  'LAST',
] as const;

/** One row's cells, in STATUS_COLUMNS order; `level` indents the id. */
export function statusCells(e: StatusEntry, level: number, now = Date.now()): string[] {
  const r = e.record;
  const tokens = r.usage.inputTokens + r.usage.outputTokens;
  const state =
    r.status + (r.status === 'queued' && e.queuePosition ? ` #${e.queuePosition}` : '') + (r.background ? ' (bg)' : '');
  const grants = secretGrantsText(r, now);
  const last =
    (r.scripted ? '[scripted] ' : '') +
    (r.runtime !== 'flotilla' ? `[${r.runtime}] ` : '') +
    (grants ? `[secrets: ${grants} left] ` : '') +
    (e.work ? `${e.work}  ` : '') +
    (r.exitReason &&
    r.status !== 'idle' &&
    !['working', 'starting', 'spawning'].includes(r.status) &&
    r.exitReason !== r.status
      ? `(${r.exitReason}) `
      : '') +
    r.lastLine;
  return [
    `${'  '.repeat(level)}${r.id}`,
    state,
    String(r.depth),
    formatTurns(r),
    formatTokens(tokens),
    r.usage.costUsd === null ? '-' : `$${r.usage.costUsd.toFixed(r.usage.costUsd < 1 ? 4 : 2)}`,
    formatElapsedMs(elapsedMs(r, now)),
    e.unread ? String(e.unread) : '-',
    last,
  ];
}

/** The whole table: header, then the tree; the last column is cut to `width` when given. */
export function formatStatus(entries: readonly StatusEntry[], opts: { now?: number; width?: number } = {}): string {
  if (entries.length === 0) return 'No agents. Start one with: spawn-agent "<task>"';
  const rows = [
    STATUS_COLUMNS as readonly string[],
    ...treeOrder(entries).map(({ entry, level }) => statusCells(entry, level, opts.now)),
  ];
  const widths = STATUS_COLUMNS.map((_, i) => Math.max(...rows.map((r) => r[i]!.length)));
  return rows
    .map((cells) => {
      let line = cells.map((c, i) => (i === cells.length - 1 ? c : c.padEnd(widths[i]!))).join('  ');
      line = line.replace(/\s+$/, '');
      if (opts.width && line.length > opts.width) line = line.slice(0, Math.max(0, opts.width - 1)) + '…';
      return line;
    })
    .join('\n');
}
