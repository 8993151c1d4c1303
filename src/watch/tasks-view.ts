import { fit, formatElapsed, scrollTop } from './format.js';
import { selectedTaskIndex, taskKey, type UiState } from './keys.js';
import type { Snapshot } from './rows.js';
import type { TaskRow } from './tasks.js';
import type { Color, Line } from './view.js';

/**
 * The tasks view (`t`): one row per task — status, board/id, title, claimant, blockers, age —
 * unfinished ones in claim order, then the last to finish; Enter goes to the claimant's
 * window. Pure, like view.ts: the snapshot, the keys' state and the room in, lines out.
 */

export const TASKS_HELP = 'j/k move · ⏎ go to the claimant · t/Esc agents · q quit';

const TONE: Record<TaskRow['status'], { color?: Color; dim?: boolean }> = {
  open: { color: 'yellow' },
  claimed: { color: 'green' },
  done: { dim: true },
  failed: { color: 'red' },
  cancelled: { dim: true },
};

export function tasksLines(
  snap: Snapshot,
  ui: UiState,
  width: number,
  room: number,
  previousTop: number,
): { lines: Line[]; top: number } {
  const tasks = snap.tasks ?? [];
  const sel = ui.tasks ?? { selected: null };
  const at = selectedTaskIndex(sel, snap);
  const header = `  ${'STATUS'.padEnd(9)} ${'TASK'.padEnd(16)} ${'CLAIMANT'.padEnd(16)} ${'BLOCKED BY'.padEnd(12)} ${'AGE'.padStart(7)}  TITLE`;
  const lines: Line[] = [[{ text: fit(header, width - 1), dim: true }]];
  if (tasks.length === 0) {
    lines.push([{ text: fit("  No tasks yet. Add one with: flotilla task add 'what to do'", width - 1), dim: true }]);
    return { lines, top: 0 };
  }
  const rows = Math.max(1, room - 1);
  const top = scrollTop(at, tasks.length, rows, previousTop);
  tasks.slice(top, top + rows).forEach((t, i) => {
    const selected = top + i === at;
    const cells = `${t.status.padEnd(9)} ${fit(`${t.board}/${t.id}`, 16).padEnd(16)} ${fit(t.claimant ?? '-', 16).padEnd(16)} ${fit(t.blockers.join(',') || '-', 12).padEnd(12)} ${formatElapsed(t.ageMs).padStart(7)}  ${t.title}`;
    lines.push([
      { text: selected ? '›' : ' ', bold: selected },
      { text: ' ' },
      { text: fit(cells, width - 3), ...TONE[t.status], bold: selected },
    ]);
  });
  return { lines, top };
}

/** Counts by status for the tasks view's title line. */
export function tasksCounts(snap: Snapshot): string {
  const n = (s: TaskRow['status']) => (snap.tasks ?? []).filter((t) => t.status === s).length;
  return `${n('open')} open, ${n('claimed')} claimed, ${n('done')} done (recent)`;
}

export { taskKey };
