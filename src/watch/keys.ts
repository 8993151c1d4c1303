import { isTerminal } from '../fleet/record-status.js';
import { nextNeedy } from './attention.js';
import type { PendingApproval, Snapshot, WatchRow } from './rows.js';
import type { TaskRow } from './tasks.js';

/**
 * The dashboard's keys as a pure state machine: (state, key) → (state, effect). The loop
 * (dashboard.ts) only feeds decoded keys in (key-decoder.ts) and runs the effects, so every
 * key is tested without a terminal.
 */

export type Mode =
  | { kind: 'browse' }
  | { kind: 'message'; id: string; text: string }
  | { kind: 'confirm-cancel'; id: string }
  | { kind: 'help' }
  | { kind: 'deny'; approval: PendingApproval; text: string };

export interface UiState {
  /** The selected agent, by id, so the selection stays put when rows move. */
  selectedId: string | null;
  mode: Mode;
  /** One line of feedback at the bottom (cleared by the next key, or after a few seconds: dashboard.ts). */
  flash: string;
  /** The tasks view (`t`) is open, with the selected task (`board/id`; null: the first). */
  tasks?: { selected: string | null };
}

export type Effect =
  | { kind: 'attach'; row: WatchRow }
  | { kind: 'send'; row: WatchRow; text: string }
  | { kind: 'cancel'; row: WatchRow }
  | { kind: 'approve'; approval: PendingApproval }
  | { kind: 'deny'; approval: PendingApproval; reason: string }
  /** A person went to a failed agent: its failure no longer needs them (seen.ts). */
  | { kind: 'seen'; row: WatchRow }
  | { kind: 'quit' };

/** A key as key-decoder.ts reports it (the names follow Ink's `Key`, which the dashboard once used). */
export interface KeyInfo {
  upArrow?: boolean;
  downArrow?: boolean;
  pageUp?: boolean;
  pageDown?: boolean;
  return?: boolean;
  escape?: boolean;
  backspace?: boolean;
  delete?: boolean;
  ctrl?: boolean;
  meta?: boolean;
  tab?: boolean;
}

export const initialUi: UiState = { selectedId: null, mode: { kind: 'browse' }, flash: '' };

/** Index of the selected row (the first row when the selection is gone). */
export function selectedIndex(ui: UiState, snap: Snapshot): number {
  const i = ui.selectedId ? snap.rows.findIndex((r) => r.id === ui.selectedId) : -1;
  return i === -1 ? 0 : i;
}

export function reduceKey(ui: UiState, input: string, key: KeyInfo, snap: Snapshot): { ui: UiState; effect?: Effect } {
  const mode = ui.mode;
  if (mode.kind === 'message' || mode.kind === 'deny') return typing(ui, mode, input, key, snap);
  // Any key closes the help (q too: it would be a surprise to quit from the help screen).
  if (mode.kind === 'help') return { ui: { ...ui, mode: { kind: 'browse' }, flash: '' } };
  if (mode.kind === 'confirm-cancel') {
    const row = snap.rows.find((r) => r.id === mode.id);
    if (input === 'y' || input === 'Y') {
      const next = { ...ui, mode: { kind: 'browse' } as const, flash: '' };
      return row ? { ui: next, effect: { kind: 'cancel', row } } : { ui: { ...next, flash: `${mode.id} is gone` } };
    }
    return { ui: { ...ui, mode: { kind: 'browse' }, flash: 'not cancelled' } };
  }

  if (ui.tasks && mode.kind === 'browse') return tasksKey(ui, ui.tasks, input, key, snap);
  const clear = { ...ui, flash: '' };
  const count = snap.rows.length;
  const at = selectedIndex(ui, snap);
  const row = snap.rows[at];
  const move = (to: number): { ui: UiState } => ({
    ui: { ...clear, selectedId: snap.rows[Math.max(0, Math.min(count - 1, to))]?.id ?? null },
  });

  if (input === 'q' || (key.ctrl && input === 'c')) return { ui: clear, effect: { kind: 'quit' } };
  if (key.downArrow || input === 'j') return move(at + 1);
  if (key.upArrow || input === 'k') return move(at - 1);
  if (key.pageDown) return move(at + 10);
  if (key.pageUp) return move(at - 10);
  if (input === 'g') return move(0);
  if (input === 'G') return move(count - 1);
  if (input === '?') return { ui: { ...clear, mode: { kind: 'help' } } };
  if (input === 't') return { ui: { ...clear, tasks: { selected: null } } };
  if (input === 'n') {
    // Nothing chosen yet (the cursor rests on the first row): n goes to the first that needs you.
    const next = nextNeedy(snap.rows, ui.selectedId && row?.need ? row.id : null);
    if (!next?.need) return { ui: { ...clear, flash: 'nothing needs you' } };
    const ui2 = { ...clear, selectedId: next.id, flash: `${next.id} ${next.need.mark}: ${next.need.hint}` };
    return next.need.kind === 'failed' ? { ui: ui2, effect: { kind: 'seen', row: next } } : { ui: ui2 };
  }
  if (!row)
    return {
      ui: input.trim() ? { ...clear, flash: 'no agents yet — spawn one with spawn-agent or flotilla up' } : clear,
    };

  if (key.return) return { ui: clear, effect: { kind: 'attach', row } };
  if (input === 'm') return { ui: { ...clear, selectedId: row.id, mode: { kind: 'message', id: row.id, text: '' } } };
  if (input === 'c') {
    if (isTerminal(row.status)) return { ui: { ...clear, flash: `${row.id} already ended (${row.status})` } };
    return { ui: { ...clear, selectedId: row.id, mode: { kind: 'confirm-cancel', id: row.id } } };
  }
  if (input === 'a' || input === 'd') {
    const approval = approvalFor(row, snap);
    if (!approval) return { ui: { ...clear, flash: `${row.id} has no pending approval` } };
    if (input === 'a') return { ui: clear, effect: { kind: 'approve', approval } };
    return { ui: { ...clear, mode: { kind: 'deny', approval, text: '' } } };
  }
  return { ui: clear };
}

/**
 * Everything in one read of the terminal counts: `tmux send-keys jj`, fast typing or a
 * busy machine deliver several keys at once, and each counts — `jj` moves two rows. Keys are
 * taken one by one until a mode that types text takes the rest as its text.
 */
export function reduceInput(
  ui: UiState,
  input: string,
  key: KeyInfo,
  snap: Snapshot,
): { ui: UiState; effects: Effect[] } {
  const special =
    key.ctrl ||
    key.meta ||
    key.escape ||
    key.upArrow ||
    key.downArrow ||
    key.pageUp ||
    key.pageDown ||
    key.tab ||
    key.backspace ||
    key.delete;
  const chars = [...input];
  if (special || chars.length <= 1) {
    const r = reduceKey(ui, input, key, snap);
    return { ui: r.ui, effects: r.effect ? [r.effect] : [] };
  }
  let state = ui;
  const effects: Effect[] = [];
  for (let i = 0; i < chars.length; i++) {
    const mode = state.mode.kind;
    const rest = chars.slice(i).join('');
    const r =
      mode === 'message' || mode === 'deny'
        ? reduceKey(state, rest, {}, snap)
        : /[\r\n]/.test(chars[i]!)
          ? reduceKey(state, '', { return: true }, snap)
          : reduceKey(state, chars[i]!, {}, snap);
    state = r.ui;
    if (r.effect) effects.push(r.effect);
    if (mode === 'message' || mode === 'deny' || r.effect?.kind === 'quit') break;
  }
  return { ui: state, effects };
}

/** The key of a task row in the tasks view. */
export const taskKey = (t: TaskRow): string => `${t.board}/${t.id}`;

export function selectedTaskIndex(sel: { selected: string | null }, snap: Snapshot): number {
  const i = sel.selected ? (snap.tasks ?? []).findIndex((t) => taskKey(t) === sel.selected) : -1;
  return i === -1 ? 0 : i;
}

/** Keys in the tasks view: move, Enter goes to the claimant's window, t or Esc back to the agents. */
function tasksKey(
  ui: UiState,
  sel: { selected: string | null },
  input: string,
  key: KeyInfo,
  snap: Snapshot,
): { ui: UiState; effect?: Effect } {
  const clear = { ...ui, flash: '' };
  const tasks = snap.tasks ?? [];
  const at = selectedTaskIndex(sel, snap);
  const move = (to: number): { ui: UiState } => {
    const t = tasks[Math.max(0, Math.min(tasks.length - 1, to))];
    return { ui: { ...clear, tasks: { selected: t ? taskKey(t) : null } } };
  };
  if (input === 'q' || (key.ctrl && input === 'c')) return { ui: clear, effect: { kind: 'quit' } };
  if (input === 't' || key.escape) {
    const { tasks: _closed, ...agents } = clear;
    return { ui: agents };
  }
  if (key.downArrow || input === 'j') return move(at + 1);
  if (key.upArrow || input === 'k') return move(at - 1);
  if (key.pageDown) return move(at + 10);
  if (key.pageUp) return move(at - 10);
  if (input === 'g') return move(0);
  if (input === 'G') return move(tasks.length - 1);
  if (input === '?') return { ui: { ...clear, mode: { kind: 'help' } } };
  if (!key.return) return { ui: clear };
  const task = tasks[at];
  if (!task) return { ui: { ...clear, flash: 'no tasks — add one with flotilla task add' } };
  if (!task.claimant || task.status !== 'claimed')
    return { ui: { ...clear, flash: `${task.id} is ${task.status}: no claimant's window to go to` } };
  const row = snap.rows.find((r) => r.id === task.claimant);
  if (!row) return { ui: { ...clear, flash: `${task.id} is claimed by ${task.claimant}, which has no window here` } };
  // Going to the claimant selects it in the agents view too, for when the person comes back.
  return { ui: { ...clear, selectedId: row.id }, effect: { kind: 'attach', row } };
}

/** The selected agent's pending approval; with only one open in the fleet, that one. */
export function approvalFor(row: WatchRow, snap: Snapshot): PendingApproval | undefined {
  return row.approval ?? (snap.approvals.length === 1 ? snap.approvals[0] : undefined);
}

function typing(
  ui: UiState,
  mode: Extract<Mode, { kind: 'message' | 'deny' }>,
  input: string,
  key: KeyInfo,
  snap: Snapshot,
): { ui: UiState; effect?: Effect } {
  if (key.escape || (key.ctrl && input === 'c'))
    return {
      ui: { ...ui, mode: { kind: 'browse' }, flash: mode.kind === 'message' ? 'message not sent' : 'not denied' },
    };
  if (key.return) {
    const browse = { ...ui, mode: { kind: 'browse' } as const, flash: '' };
    if (mode.kind === 'deny')
      return { ui: browse, effect: { kind: 'deny', approval: mode.approval, reason: mode.text } };
    const row = snap.rows.find((r) => r.id === mode.id);
    if (!row) return { ui: { ...browse, flash: `${mode.id} is gone` } };
    if (!mode.text.trim()) return { ui: { ...browse, flash: 'message not sent (empty)' } };
    return { ui: browse, effect: { kind: 'send', row, text: mode.text } };
  }
  if (key.backspace || key.delete) return { ui: { ...ui, mode: { ...mode, text: mode.text.slice(0, -1) } } };
  if (key.ctrl || key.meta || key.tab || key.upArrow || key.downArrow) return { ui };
  // Typing fast (or a busy machine) can deliver the text and its Enter in one read: take the
  // text, then submit, as if Enter had come alone.
  if (input.length > 1 && /[\r\n]$/.test(input)) {
    const typed = typing(ui, mode, input.replace(/[\r\n]+$/, ''), key, snap);
    const next = typed.ui.mode;
    if (next.kind !== 'message' && next.kind !== 'deny') return typed;
    return typing(typed.ui, next, '', { ...key, return: true }, snap);
  }
  // A paste arrives as one string; keep it on one line.
  // eslint-disable-next-line no-control-regex
  const text = input.replace(/[\r\n]+/g, ' ').replace(/[\x00-\x1f\x7f]/g, '');
  return { ui: { ...ui, mode: { ...mode, text: mode.text + text } } };
}
