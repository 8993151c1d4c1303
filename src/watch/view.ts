import { fit, headerCells, layoutColumns, rowCells, scrollTop, type Cell, type Column } from './format.js';
import { selectedIndex, type UiState } from './keys.js';
import type { HostSection, Snapshot, WatchRow } from './rows.js';
import { TASKS_HELP, tasksCounts, tasksLines } from './tasks-view.js';

/**
 * The dashboard's screen as a pure function: (snapshot, keys' state, terminal size) → the
 * frame's lines, each a list of styled segments. Layout for 80×24: a title line, the column
 * header, the agent tree (scrolled around the selection), the selected agent's details and
 * any pending approvals, then the prompt / feedback line and the key help. Every line is
 * cut to the width when painted (paint.ts), so a line never wraps onto the next.
 */

export type Color = 'green' | 'yellow' | 'cyan' | 'red';

export interface Segment {
  text: string;
  color?: Color | undefined;
  bold?: boolean | undefined;
  dim?: boolean | undefined;
}

export type Line = Segment[];

export interface ViewSize {
  columns: number;
  rows: number;
}

export interface Frame {
  lines: Line[];
  /** The first agent row shown; pass it back next time so the list scrolls only as the selection needs. */
  top: number;
}

type Style = Omit<Segment, 'text'>;

const TONES: Record<NonNullable<Cell['tone']>, Style> = {
  live: { color: 'green' },
  waiting: { color: 'yellow', bold: true },
  idle: { color: 'cyan' },
  ok: { color: 'green' },
  bad: { color: 'red' },
  muted: { dim: true },
  mark: { color: 'yellow' },
  dim: { dim: true },
  alert: { color: 'yellow', bold: true },
};

// j/k and the rest are on the `?` screen: the line keeps to 80 columns.
const HELP = 'n next · ⏎ attach · m message · c cancel · a/d approve/deny · ? keys · q quit';

/** Every key, for `?` (README "The dashboard" lists the same). */
export const KEYS: readonly (readonly [string, string])[] = [
  ['n', 'next agent that needs you: an approval or secret request, mail for you, a failure, a place in line'],
  ['j k ↑ ↓', 'move the selection'],
  ['g G', 'first / last agent'],
  ['PgUp PgDn', 'ten agents up / down'],
  ['⏎', "attach: switch to the agent's tmux window (another host's: a new window running ssh -t there)"],
  ['m', 'message the agent (⏎ sends, Esc cancels)'],
  ['c', 'cancel the agent (asks y/n)'],
  ['a', "approve the agent's pending request"],
  ['d', 'deny it, with a reason (⏎ denies, Esc goes back)'],
  [
    't',
    "the tasks view: every board's tasks with status, claimant, blockers and age; ⏎ goes to the claimant's window, t or Esc back",
  ],
  ['?', 'this list (any key closes it)'],
  ['q  Ctrl-C', 'quit the dashboard (the agents go on)'],
];

/** The frame for this snapshot, state and size. `previousTop` is the last frame's `top`. */
export function dashboardView(snap: Snapshot, ui: UiState, size: ViewSize, title: string, previousTop = 0): Frame {
  const width = frameWidth(size.columns);
  const cols = layoutColumns(width, snap.rows);
  const selected = selectedIndex(ui, snap);
  const row = snap.rows[selected];
  const approvals = snap.approvals.slice(0, 3);
  const schedules = scheduleLines(snap.schedules ?? [], width);
  // Title, header, blank, 2 detail lines, approvals (+1 title), schedules, prompt, help.
  const fixed = 2 + 1 + 2 + (approvals.length ? approvals.length + 1 : 0) + schedules.length + 2;
  const room = Math.max(1, size.rows - fixed - 1);
  const window = listWindow(snap, selected, room, scrollTop(selected, snap.rows.length, room, previousTop));
  const { top } = window;
  const visible = snap.rows.slice(top, top + window.count);

  const live = snap.rows.filter((r) => r.tone === 'live' || r.tone === 'waiting').length;
  const scripted = snap.rows.some((r) => r.scripted);
  const plural = (n: number, word: string): string => `${n} ${word}${n === 1 ? '' : 's'}`;
  const counts =
    `${plural(snap.rows.length, 'agent')}, ${live} working` +
    (snap.needs ? `, ${snap.needs} need${snap.needs === 1 ? 's' : ''} you (n)` : '') +
    (snap.approvals.length ? `, ${plural(snap.approvals.length, 'approval')} waiting` : '') +
    (snap.humanUnread ? `, ${snap.humanUnread} unread for you` : '');

  const lines: Line[] = [
    [
      { text: fit(title, Math.max(10, width - counts.length - 3)), bold: true },
      { text: `  ${counts}`, dim: true, ...(snap.needs ? { color: 'yellow' as const, dim: false } : {}) },
    ],
  ];
  if (ui.mode.kind === 'help') return { lines: [...lines, ...helpLines(width, size.rows - 1)], top: previousTop };
  if (ui.tasks) {
    const view = tasksLines(snap, ui, width, Math.max(2, size.rows - 4), previousTop);
    lines[0] = [
      { text: fit(`${title} — tasks`, Math.max(10, width - 40)), bold: true },
      { text: `  ${tasksCounts(snap)}`, dim: true },
    ];
    return {
      lines: [...lines, ...view.lines, promptLine(ui, width), [{ text: fit(TASKS_HELP, width - 1), dim: true }]],
      top: view.top,
    };
  }
  lines.push(cellsLine('  ', headerCells(cols), false));
  if (visible.length === 0 && !snap.hosts)
    lines.push([
      { text: fit('  No agents yet. Start one with: spawn-agent "a task"   (or flotilla up)', width - 1), dim: true },
    ]);
  visible.forEach((r, i) => {
    for (const h of headingsAt(snap, top + i, top)) lines.push(headingLine(h, width));
    lines.push(rowLine(r, cols, r.id === row?.id));
  });
  // Hosts after the last row (running nothing, or this host with no agents on an empty fleet).
  if (top + visible.length === snap.rows.length)
    for (const h of headingsAt(snap, snap.rows.length, top)) lines.push(headingLine(h, width));
  lines.push(moreLine(top, visible.length, snap.rows.length, width), ...details(row, width));
  if (approvals.length > 0)
    lines.push([
      {
        text: fit('Pending approvals (a approve · d deny on the selected agent):', width - 1),
        color: 'yellow',
        bold: true,
      },
    ]);
  for (const a of approvals) {
    const what = a.summary.replace(`${a.agentId} asks to run `, '').replace(`${a.agentId} asks for `, 'wants ');
    lines.push([{ text: fit(`  ${a.agentId}: ${what}   [${a.requestId}]`, width - 1), color: 'yellow' }]);
  }
  lines.push(...schedules);
  lines.push(promptLine(ui, width));
  lines.push([{ text: fit(HELP + (scripted ? ' · * scripted model' : ''), width - 1), dim: true }]);
  return { lines, top };
}

/**
 * Which rows fit in `room` lines with the host headings among them (§17.6): the window from
 * `top` shrinks, away from the selected row, until rows and headings fit.
 */
function listWindow(snap: Snapshot, selected: number, room: number, top: number): { top: number; count: number } {
  let count = Math.min(room, snap.rows.length - top);
  if (!snap.hosts) return { top, count };
  const used = (): number => {
    let n = count;
    for (let i = top; i <= top + count; i++)
      if (i < top + count || i === snap.rows.length) n += headingsAt(snap, i, top).length;
    return n;
  };
  while (count > 1 && used() > room) {
    if (selected === top + count - 1) top++;
    count--;
  }
  return { top, count };
}

/**
 * The headings drawn before row `i`: of each host whose rows start there (or that has none and
 * sits there), and at the top of the window the heading of the host its first row belongs to.
 */
function headingsAt(snap: Snapshot, i: number, top: number): HostSection[] {
  return (snap.hosts ?? []).filter((h) => h.first === i || (i === top && h.first < top && h.first + h.count > top));
}

/** A host's heading (`flotilla status`'s words); LOST in red, an empty host says so. */
function headingLine(h: HostSection, width: number): Line {
  const text = `${h.heading}${h.count === 0 ? ' · no agents' : ''}`;
  return [
    { text: fit(text, width - 1), bold: true, ...(h.lost ? { color: 'red' as const } : { color: 'cyan' as const }) },
  ];
}

/** The schedules block: its title and at most three schedules, then how many more there are. */
function scheduleLines(summary: readonly string[], width: number): Line[] {
  if (summary.length === 0) return [];
  const [title, ...rows] = summary;
  const shown = rows.slice(0, 3).map((r): Line => [{ text: fit(r, width - 1) }]);
  const more =
    rows.length > 3
      ? [[{ text: fit(`  … ${rows.length - 3} more — flotilla schedule list`, width - 1), dim: true }] as Line]
      : [];
  return [[{ text: fit(title!, width - 1), bold: true }], ...shown, ...more];
}

/** The width the frame is laid out for: the terminal's, but never under 40 columns (narrower windows cut the lines). */
export function frameWidth(columns: number): number {
  return Math.max(40, columns);
}

/** An agent's line: the selection marker, `!` when it needs a person, then its cells. */
function rowLine(r: WatchRow, cols: Column[], selected: boolean): Line {
  const line = cellsLine(selected ? '›' : ' ', rowCells(r, cols), selected);
  line.splice(1, 0, r.need ? { text: '!', color: 'yellow', bold: true } : { text: ' ' });
  return line;
}

/** Under the list: how many rows are above and below the window, or a blank line when all fit. */
function moreLine(top: number, shown: number, total: number, width: number): Line {
  const above = top;
  const below = total - top - shown;
  if (above <= 0 && below <= 0) return [{ text: ' ' }];
  const parts = [below > 0 ? `↓ ${below} more below` : '', above > 0 ? `↑ ${above} above` : ''].filter(Boolean);
  return [{ text: fit(`  ${parts.join(' · ')} (j/k, PgUp/PgDn, g/G)`, width - 1), dim: true }];
}

/** The `?` screen: every key and what it does. */
function helpLines(width: number, room: number): Line[] {
  const keyWidth = Math.max(...KEYS.map(([k]) => k.length)) + 2;
  const out: Line[] = [[{ text: ' ' }], [{ text: fit('Keys', width - 1), bold: true }]];
  for (const [k, what] of KEYS)
    out.push([
      { text: `  ${k.padEnd(keyWidth)}`, color: 'cyan' },
      { text: fit(what, Math.max(1, width - keyWidth - 3)) },
    ]);
  out.push(
    [{ text: ' ' }],
    [{ text: fit('Marked ! and listed first: the agents that need you. Any key closes this.', width - 1), dim: true }],
  );
  return out.slice(0, Math.max(1, room));
}

/** A row or the header: the selection marker, then the cells joined by single spaces; the selected row all bold. */
function cellsLine(prefix: string, cells: readonly Cell[], bold: boolean): Line {
  const line: Line = [{ text: prefix, bold }];
  cells.forEach((c, i) => {
    const t = c.tone ? TONES[c.tone] : {};
    line.push({ text: (i === 0 ? '' : ' ') + c.text, color: t.color, dim: t.dim, bold: (t.bold ?? false) || bold });
  });
  return line;
}

function details(row: WatchRow | undefined, width: number): Line[] {
  if (!row) return [[{ text: ' ', dim: true }]];
  const where = row.tmux ? `window ${row.tmux.windowId}` : 'no window';
  const model =
    row.model +
    (row.scripted ? ' [scripted model]' : '') +
    (row.runtime !== 'flotilla' ? ` [runtime ${row.runtime}]` : '');
  // What it holds or waits for comes before the long facts, so a narrow dashboard still shows it.
  const facts = [
    row.id,
    row.name,
    `depth ${row.depth}`,
    row.leases ? `leases: ${row.leases}` : '',
    row.secrets ? `secrets: ${row.secrets} left` : '',
    model,
    row.host ? `on host ${row.host}` : '',
    where,
    row.pid ? `pid ${row.pid}` : '',
  ]
    .filter(Boolean)
    .join(' · ');
  return [
    [{ text: fit(facts, width - 1), color: 'cyan' }],
    [
      {
        text: fit(`  ${row.approval ? `asks: ${row.approval.summary}` : row.lastLine || '(no output yet)'}`, width - 1),
      },
    ],
  ];
}

/** The line above the help: what is being typed, a question, or the last key's feedback. */
function promptLine(ui: UiState, width: number): Line {
  const m = ui.mode;
  if (m.kind === 'message')
    return [{ text: fit(`message to ${m.id} (⏎ send, Esc cancel): ${m.text}`, width - 2) + '▏', color: 'cyan' }];
  if (m.kind === 'deny')
    return [
      {
        text: fit(`deny ${m.approval.requestId} — reason (⏎ deny, Esc back): ${m.text}`, width - 2) + '▏',
        color: 'yellow',
      },
    ];
  if (m.kind === 'confirm-cancel') return [{ text: fit(`cancel ${m.id}? (y/n)`, width - 1), color: 'red', bold: true }];
  return [{ text: fit(ui.flash || ' ', width - 1) }];
}
