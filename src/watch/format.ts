import { formatElapsedMs, formatTokens } from '../fleet/status-view.js';
import type { WatchRow } from './rows.js';

/**
 * How a row is laid out in a given width (pure). Columns shrink to fit 80×24: the agent
 * column to its longest entry, the cost column only when some cost is known, and the last
 * line takes what is left. Every cell is cut to its width, so a line never wraps.
 */

export interface Column {
  key: 'agent' | 'state' | 'turns' | 'tokens' | 'cost' | 'elapsed' | 'mail' | 'last';
  title: string;
  width: number;
  align: 'left' | 'right';
}

export interface Cell {
  text: string;
  tone?: WatchRow['tone'] | 'mark' | 'dim' | 'alert' | undefined;
}

/** `0s`, `12s`, `3m04s`, `2h05m` — whole seconds, so a redraw only happens when the text changes. */
export function formatElapsed(ms: number): string {
  return ms < 1000 ? '0s' : formatElapsedMs(ms);
}

export { formatTokens };

export function formatCost(usd: number | null): string {
  if (usd === null) return '–';
  return usd < 0.01 && usd > 0 ? '<$0.01' : `$${usd.toFixed(2)}`;
}

/** Cuts `text` to `width` columns with an ellipsis; one line. */
export function fit(text: string, width: number): string {
  const flat = text.replace(/\s+/g, ' ');
  if (width <= 0) return '';
  if (flat.length <= width) return flat;
  return width === 1 ? '…' : flat.slice(0, width - 1) + '…';
}

function pad(text: string, width: number, align: 'left' | 'right'): string {
  const t = fit(text, width);
  return align === 'left' ? t.padEnd(width) : t.padStart(width);
}

/** The agent cell: tree branch, id, and `*` for the scripted model. */
export function agentLabel(row: WatchRow): string {
  return `${row.branch}${row.id}${row.scripted ? ' *' : ''}${row.runtime !== 'flotilla' ? ` [${row.runtime}]` : ''}`;
}

/** The columns for this terminal width and these rows. The selection marker takes 2 columns before them. */
export function layoutColumns(width: number, rows: readonly WatchRow[]): Column[] {
  const longest = Math.max(5, ...rows.map((r) => agentLabel(r).length));
  const withCost = rows.some((r) => r.costUsd !== null);
  const middle: Column[] = [
    { key: 'state', title: 'STATE', width: 10, align: 'left' },
    { key: 'turns', title: 'TURNS', width: 5, align: 'right' },
    { key: 'tokens', title: 'TOKENS', width: 6, align: 'right' },
  ];
  if (withCost) middle.push({ key: 'cost', title: 'COST', width: 6, align: 'right' });
  middle.push(
    { key: 'elapsed', title: 'TIME', width: 6, align: 'right' },
    { key: 'mail', title: 'MAIL', width: 4, align: 'right' },
  );
  const fixed = 2 + middle.reduce((n, c) => n + c.width + 1, 0);
  // The agent column gets what it needs, but leaves the last line at least 12 columns.
  const agent = Math.max(10, Math.min(longest, Math.floor(width * 0.4), width - fixed - 1 - 1 - 12));
  const cols: Column[] = [{ key: 'agent', title: 'AGENT', width: agent, align: 'left' }, ...middle];
  const used = fixed + agent + 1;
  cols.push({ key: 'last', title: 'LAST LINE', width: Math.max(0, width - used - 1), align: 'left' });
  return cols;
}

export function headerCells(cols: readonly Column[]): Cell[] {
  return cols.map((c) => ({ text: pad(c.title, c.width, c.align), tone: 'dim' as const }));
}

/** One row's cells, each padded to its column (joined with single spaces by the caller). */
export function rowCells(row: WatchRow, cols: readonly Column[]): Cell[] {
  return cols.map((c): Cell => {
    switch (c.key) {
      case 'agent':
        return { text: pad(agentLabel(row), c.width, c.align), tone: row.approval ? 'alert' : undefined };
      case 'state':
        return { text: pad(row.state, c.width, c.align), tone: row.tone };
      case 'turns':
        return { text: pad(row.maxTurns ? `${row.turns}/${row.maxTurns}` : String(row.turns), c.width, c.align) };
      case 'tokens':
        return { text: pad(formatTokens(row.tokens), c.width, c.align) };
      case 'cost':
        return { text: pad(formatCost(row.costUsd), c.width, c.align), tone: row.costUsd === null ? 'dim' : undefined };
      case 'elapsed':
        return { text: pad(formatElapsed(row.elapsedMs), c.width, c.align) };
      case 'mail':
        return { text: pad(row.unread ? `✉${row.unread}` : '·', c.width, c.align), tone: row.unread ? 'alert' : 'dim' };
      case 'last':
        return {
          text: pad([row.work, row.leases, row.lastLine].filter(Boolean).join('  '), c.width, c.align),
          tone: 'dim',
        };
    }
  });
}

/** Plain text of a row as printed (for tests and for a screen without colour). */
export function rowText(row: WatchRow, cols: readonly Column[], selected: boolean): string {
  return (
    (selected ? '› ' : '  ') +
    rowCells(row, cols)
      .map((c) => c.text)
      .join(' ')
  );
}

/** The first visible row so that `selected` stays in a window of `height` rows. */
export function scrollTop(selected: number, count: number, height: number, previousTop = 0): number {
  if (count <= height) return 0;
  let top = Math.min(Math.max(0, previousTop), count - height);
  if (selected < top) top = selected;
  if (selected >= top + height) top = selected - height + 1;
  return Math.max(0, Math.min(top, count - height));
}
