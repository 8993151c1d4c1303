import type { BoardListing, Counts, ListedTask } from './list.js';
import type { Task } from './task.js';

/** Tasks as text for `task list` / `task show` (pure). */

export function countsLine(board: string, c: Counts): string {
  return `board ${board}: ${c.open} open, ${c.claimed} claimed, ${c.done} done, ${c.failed} failed, ${c.cancelled} cancelled`;
}

/** 65_000 ms → `1m`; whole units, like status's elapsed column. */
export function age(iso: string, now: number): string {
  const s = Math.max(0, Math.floor((now - Date.parse(iso)) / 1000));
  if (s < 60) return `${s}s`;
  if (s < 3600) return `${Math.floor(s / 60)}m`;
  if (s < 86_400) return `${Math.floor(s / 3600)}h`;
  return `${Math.floor(s / 86_400)}d`;
}

function rows(tasks: readonly ListedTask[], now: number): string[][] {
  return tasks.map((t) => [
    t.id,
    t.status === 'open' && t.waiting_on.length > 0 ? 'blocked' : t.status,
    t.priority,
    t.claimed_by ?? '-',
    age(t.status === 'claimed' && t.claimed_at ? t.claimed_at : t.updated_at, now),
    t.title + (t.waiting_on.length > 0 ? `  (waits on ${t.waiting_on.join(', ')})` : ''),
  ]);
}

function table(cells: string[][]): string[] {
  const widths = cells[0]!.map((_, i) => Math.max(...cells.map((r) => r[i]!.length)));
  return cells.map((r) =>
    r
      .map((c, i) => (i === r.length - 1 ? c : c.padEnd(widths[i]!)))
      .join('  ')
      .trimEnd(),
  );
}

const HEADER = ['ID', 'STATUS', 'PRIORITY', 'CLAIMANT', 'AGE', 'TITLE'];

export function formatListing(l: BoardListing, now = Date.now()): string {
  const out = [countsLine(l.board, l.counts)];
  if (l.tasks.length === 0 && l.recent.length === 0) {
    out.push(
      `no tasks — add one with: flotilla task add${l.board === 'fleet' ? '' : ` --board ${l.board}`} 'what to do'`,
    );
    return out.join('\n');
  }
  if (l.tasks.length > 0) out.push(...table([HEADER, ...rows(l.tasks, now)]));
  if (l.more > 0) out.push(`… ${l.more} more unfinished — flotilla task list --all`);
  if (l.recent.length > 0) {
    out.push('finished lately:');
    out.push(...table(rows(l.recent, now)).map((line) => `  ${line}`));
  }
  return out.join('\n');
}

export function formatTask(t: Task): string {
  const lines = [
    `${t.id}  ${t.title}`,
    `board:      ${t.board}`,
    `status:     ${t.status}`,
    `priority:   ${t.priority}`,
    `created:    ${t.created_at} by ${t.created_by}`,
  ];
  if (t.claimed_by) lines.push(`claimant:   ${t.claimed_by} (claimed ${t.claimed_at ?? '?'})`);
  if (t.labels.length > 0) lines.push(`labels:     ${t.labels.join(', ')}`);
  if (t.blocked_by.length > 0) lines.push(`blocked by: ${t.blocked_by.join(', ')}`);
  if (t.finished_at) lines.push(`finished:   ${t.finished_at}`);
  for (const n of t.notes) lines.push(`note:       ${n.at} ${n.by}: ${n.text}`);
  if (t.body) lines.push('', t.body);
  if (t.result !== null) lines.push('', `result:`, t.result);
  return lines.join('\n');
}
