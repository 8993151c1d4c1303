import { Box, Text, useApp, useInput, useStdout } from 'ink';
import { useEffect, useRef, useState } from 'react';
import type { WatchActions } from './actions.js';
import type { FleetFeed } from './feed.js';
import { fit, headerCells, layoutColumns, rowCells, scrollTop, type Cell } from './format.js';
import { initialUi, reduceInput, selectedIndex, type Effect, type UiState } from './keys.js';
import type { Snapshot, WatchRow } from './rows.js';

/**
 * The dashboard screen (Ink). Data comes from the feed, keys go through `reduceInput`, and
 * effects run through `actions`; this file only draws. Layout for 80×24: a title line, the
 * column header, the agent tree (scrolled around the selection), the selected agent's
 * details and any pending approvals, then the prompt / feedback line and the key help.
 */

export interface DashboardProps {
  feed: FleetFeed;
  actions: WatchActions;
  title: string;
}

const TONES: Record<NonNullable<Cell['tone']>, { color?: string; dim?: boolean; bold?: boolean }> = {
  live: { color: 'green' },
  waiting: { color: 'yellow', bold: true },
  idle: { color: 'cyan' },
  ok: { color: 'green', dim: false },
  bad: { color: 'red' },
  muted: { dim: true },
  mark: { color: 'yellow' },
  dim: { dim: true },
  alert: { color: 'yellow', bold: true },
};

export function Dashboard({ feed, actions, title }: DashboardProps): React.JSX.Element {
  const { exit } = useApp();
  const { stdout } = useStdout();
  const [snap, setSnap] = useState<Snapshot>(feed.current);
  // Keys can arrive faster than React re-renders (a paste, tmux send-keys): the reducer
  // always works on the latest state through the ref, never on a stale render's copy.
  const uiRef = useRef<UiState>(initialUi);
  const [ui, setUiState] = useState<UiState>(initialUi);
  const setUi = (next: UiState): void => {
    uiRef.current = next;
    setUiState(next);
  };
  const [size, setSize] = useState({ columns: stdout.columns || 80, rows: stdout.rows || 24 });
  const top = useRef(0);

  useEffect(() => feed.subscribe(setSnap), [feed]);
  useEffect(() => {
    const onResize = (): void => setSize({ columns: stdout.columns || 80, rows: stdout.rows || 24 });
    stdout.on('resize', onResize);
    return () => {
      stdout.off('resize', onResize);
    };
  }, [stdout]);

  const run = (effect: Effect): void => {
    if (effect.kind === 'quit') {
      exit();
      return;
    }
    const job = effect.kind === 'attach' ? actions.attach(effect.row)
      : effect.kind === 'send' ? actions.send(effect.row, effect.text)
        : effect.kind === 'cancel' ? actions.cancel(effect.row)
          : effect.kind === 'approve' ? actions.approve(effect.approval)
            : actions.deny(effect.approval, effect.reason);
    void job.then((flash) => {
      setUi({ ...uiRef.current, flash });
      // Act on the result now rather than at the next file event.
      feed.refresh();
    });
  };

  useInput((input, key) => {
    const r = reduceInput(uiRef.current, input, key, feed.current);
    setUi(r.ui);
    for (const effect of r.effects) run(effect);
  });

  const width = Math.max(40, size.columns);
  const cols = layoutColumns(width, snap.rows);
  const selected = selectedIndex(ui, snap);
  const row = snap.rows[selected];
  const approvals = snap.approvals.slice(0, 3);
  // Title, header, blank, 2 detail lines, approvals (+1 title), prompt, help.
  const fixed = 2 + 1 + 2 + (approvals.length ? approvals.length + 1 : 0) + 2;
  const room = Math.max(1, size.rows - fixed - 1);
  const first = scrollTop(selected, snap.rows.length, room, top.current);
  top.current = first;
  const visible = snap.rows.slice(first, first + room);

  const live = snap.rows.filter((r) => r.tone === 'live' || r.tone === 'waiting').length;
  const scripted = snap.rows.some((r) => r.scripted);
  const counts = `${snap.rows.length} agent${snap.rows.length === 1 ? '' : 's'}, ${live} working` +
    (snap.approvals.length ? `, ${snap.approvals.length} approval${snap.approvals.length === 1 ? '' : 's'} waiting` : '') +
    (snap.humanUnread ? `, ${snap.humanUnread} unread for you` : '');

  return (
    <Box flexDirection="column" width={width}>
      <Text>
        <Text bold>{fit(title, Math.max(10, width - counts.length - 3))}</Text>
        <Text dimColor>{'  '}{counts}</Text>
      </Text>
      <Line prefix="  " cells={headerCells(cols)} />
      {visible.length === 0 ? (
        <Text dimColor>  No agents yet. Start one with: spawn-agent "a task"   (or flotilla up)</Text>
      ) : (
        visible.map((r) => <Line key={r.id} prefix={r.id === row?.id ? '› ' : '  '} bold={r.id === row?.id} cells={rowCells(r, cols)} />)
      )}
      <Text> </Text>
      <Details row={row} width={width} scripted={scripted} />
      {approvals.length > 0 && <Text color="yellow" bold>{fit(`Pending approvals (a approve · d deny on the selected agent):`, width - 1)}</Text>}
      {approvals.map((a) => (
        <Text key={a.requestId} color="yellow">{fit(`  ${a.agentId}: ${a.summary.replace(`${a.agentId} asks to run `, '').replace(`${a.agentId} asks for `, 'wants ')}   [${a.requestId}]`, width - 1)}</Text>
      ))}
      <PromptLine ui={ui} width={width} />
      <Text dimColor>{fit('j/k move · ⏎ attach · m message · c cancel · a/d approve/deny · q quit' + (scripted ? ' · * scripted model' : ''), width - 1)}</Text>
    </Box>
  );
}

function Line({ prefix, cells, bold }: { prefix: string; cells: Cell[]; bold?: boolean }): React.JSX.Element {
  return (
    <Text wrap="truncate" bold={bold ?? false}>
      {prefix}
      {cells.map((c, i) => {
        const t = c.tone ? TONES[c.tone] : {};
        return (
          <Text key={i} {...(t.color ? { color: t.color } : {})} dimColor={t.dim ?? false} bold={(t.bold ?? false) || (bold ?? false)}>
            {i === 0 ? '' : ' '}{c.text}
          </Text>
        );
      })}
    </Text>
  );
}

function Details({ row, width, scripted }: { row: WatchRow | undefined; width: number; scripted: boolean }): React.JSX.Element {
  if (!row) return <Text dimColor>{fit(scripted ? '' : ' ', width - 1)}</Text>;
  const where = row.tmux ? `window ${row.tmux.windowId}` : 'no window';
  const facts = [row.id, row.name, `depth ${row.depth}`, row.model + (row.scripted ? ' [scripted model]' : '') + (row.runtime !== 'flotilla' ? ` [runtime ${row.runtime}]` : ''), where, row.pid ? `pid ${row.pid}` : '', row.secrets ? `secrets: ${row.secrets} left` : '']
    .filter(Boolean).join(' · ');
  return (
    <Box flexDirection="column">
      <Text color="cyan">{fit(facts, width - 1)}</Text>
      <Text>{fit(`  ${row.approval ? `asks: ${row.approval.summary}` : row.lastLine || '(no output yet)'}`, width - 1)}</Text>
    </Box>
  );
}

function PromptLine({ ui, width }: { ui: UiState; width: number }): React.JSX.Element {
  const m = ui.mode;
  if (m.kind === 'message') return <Text color="cyan">{fit(`message to ${m.id} (⏎ send, Esc cancel): ${m.text}`, width - 2)}▏</Text>;
  if (m.kind === 'deny') return <Text color="yellow">{fit(`deny ${m.approval.requestId} — reason (⏎ deny, Esc back): ${m.text}`, width - 2)}▏</Text>;
  if (m.kind === 'confirm-cancel') return <Text color="red" bold>{fit(`cancel ${m.id}? (y/n)`, width - 1)}</Text>;
  return <Text>{fit(ui.flash || ' ', width - 1)}</Text>;
}
