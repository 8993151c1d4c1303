import { describe, expect, it } from 'vitest';
import { initialUi, type UiState } from '../../src/watch/keys.js';
import { paintLine, plainLine } from '../../src/watch/paint.js';
import type { PendingApproval, Snapshot, WatchRow } from '../../src/watch/rows.js';
import { dashboardView } from '../../src/watch/view.js';

function row(id: string, over: Partial<WatchRow> = {}): WatchRow {
  return {
    id,
    name: 'worker',
    depth: 0,
    branch: '',
    status: 'working',
    state: 'working',
    tone: 'live',
    dead: false,
    turns: 2,
    maxTurns: 20,
    tokens: 1500,
    costUsd: null,
    elapsedMs: 12_000,
    unread: 0,
    lastLine: `line of ${id}`,
    model: 'script:x.yaml',
    scripted: true,
    runtime: 'flotilla',
    approval: null,
    secrets: '',
    tmux: null,
    pid: 4242,
    need: null,
    queuePosition: null,
    pending: false,
    ...over,
  };
}

const snap = (rows: WatchRow[], over: Partial<Snapshot> = {}): Snapshot => ({
  rows,
  humanUnread: 0,
  approvals: [],
  needs: rows.filter((r) => r.need).length,
  ...over,
});
const text = (s: Snapshot, ui: UiState = initialUi, size = { columns: 80, rows: 24 }): string[] =>
  dashboardView(s, ui, size, 'flotilla · demo').lines.map((l) => plainLine(l).trimEnd());

describe('dashboardView', () => {
  it('an empty fleet: title, header, how to start, the key help last', () => {
    const lines = text(snap([]));
    expect(lines[0]).toBe('flotilla · demo  0 agents, 0 working');
    expect(lines[1]).toMatch(/^ {2}AGENT\s+STATE\s+TURNS\s+TOKENS\s+TIME\s+MAIL\s+LAST LINE$/);
    expect(lines[2]).toBe(' No agents yet. Start one with: spawn-agent "a task" (or flotilla up)');
    expect(lines.at(-1)).toBe('n next · ⏎ attach · m message · c cancel · a/d approve/deny · ? keys · q quit');
  });

  it("rows in order with the selection marked, the selected agent's details below", () => {
    const s = snap([
      row('lead-aaaaaa'),
      row('kid-bbbbbb', { branch: '└ ', depth: 1, status: 'completed', state: 'completed', tone: 'ok', unread: 2 }),
    ]);
    const lines = text(s, { ...initialUi, selectedId: 'kid-bbbbbb' });
    expect(lines[0]).toBe('flotilla · demo  2 agents, 1 working');
    expect(lines[2]).toMatch(/^ {2}lead-aaaaaa \*\s+working\s+2\/20\s+1\.5k\s+12s\s+· line of lead-aaaaaa$/);
    expect(lines[3]).toMatch(/^› └ kid-bbbbbb \*\s+completed\s+2\/20.*✉2 line of kid-bbbbbb$/);
    expect(lines[4]).toBe('');
    expect(lines[5]).toBe('kid-bbbbbb · worker · depth 1 · script:x.yaml [scripted model] · no window · p…');
    expect(lines[6]).toBe(' line of kid-bbbbbb');
    expect(lines.at(-1)).toMatch(/q quit …$/);
    // No line is wider than the window, so none wraps.
    for (const l of lines) expect([...l].length).toBeLessThan(80);
  });

  it("the selected agent's leases come before its long facts, so an 80-column dashboard shows what it waits for", () => {
    const waiting = row('mate', {
      leases: '⧗ README.md (held by claude-mate)',
      secrets: 'deploy-token 9s',
      model: 'script:/a/long/checkout/path/test/scenarios/fixtures/model/mate.yaml',
    });
    const lines = text(snap([waiting]), { ...initialUi, selectedId: 'mate' });
    expect(lines.find((l) => l.startsWith('mate · '))).toBe(
      'mate · worker · depth 0 · leases: ⧗ README.md (held by claude-mate) · secrets:…',
    );
  });

  it('pending approvals, the message prompt and the cancel question', () => {
    const approval: PendingApproval = {
      requestId: 'req1',
      agentId: 'lead-aaaaaa',
      tool: 'shell',
      summary: 'lead-aaaaaa asks to run $ npm publish',
      timestamp: '',
    };
    const s = snap([row('lead-aaaaaa', { approval })], { approvals: [approval], humanUnread: 1 });
    const lines = text(s);
    expect(lines[0]).toBe('flotilla · demo  1 agent, 1 working, 1 approval waiting, 1 unread for you');
    expect(lines).toContain('Pending approvals (a approve · d deny on the selected agent):');
    // fit() folds runs of spaces, as the dashboard always has.
    expect(lines).toContain(' lead-aaaaaa: $ npm publish [req1]');
    expect(lines).toContain(' asks: lead-aaaaaa asks to run $ npm publish');
    expect(text(s, { ...initialUi, mode: { kind: 'message', id: 'lead-aaaaaa', text: 'hi there' } }).at(-2)).toBe(
      'message to lead-aaaaaa (⏎ send, Esc cancel): hi there▏',
    );
    expect(text(s, { ...initialUi, mode: { kind: 'confirm-cancel', id: 'lead-aaaaaa' } }).at(-2)).toBe(
      'cancel lead-aaaaaa? (y/n)',
    );
    expect(text(s, { ...initialUi, flash: 'sent m1 to lead-aaaaaa' }).at(-2)).toBe('sent m1 to lead-aaaaaa');
  });

  it('scrolls to keep the selection on a short screen, and fits the frame to its height', () => {
    const rows = Array.from({ length: 30 }, (_, i) => row(`agent-${String(i).padStart(2, '0')}`));
    const frame = dashboardView(
      snap(rows),
      { ...initialUi, selectedId: 'agent-25' },
      { columns: 80, rows: 16 },
      't',
      0,
    );
    const lines = frame.lines.map(plainLine);
    expect(lines.length).toBeLessThanOrEqual(16);
    expect(lines.some((l) => l.startsWith('› agent-25'))).toBe(true);
    expect(lines.some((l) => l.includes('agent-00'))).toBe(false);
    // The next frame keeps the same window while the selection stays inside it.
    const again = dashboardView(
      snap(rows),
      { ...initialUi, selectedId: 'agent-24' },
      { columns: 80, rows: 16 },
      't',
      frame.top,
    );
    expect(again.top).toBe(frame.top);
  });
});

describe('paintLine', () => {
  it('cuts a line to the width with an ellipsis, and drops control characters', () => {
    expect(paintLine([{ text: 'abcdef' }, { text: 'ghij' }], 8, { styles: false })).toBe('abcdefg…');
    expect(paintLine([{ text: 'abcd' }, { text: 'efgh' }], 8, { styles: false })).toBe('abcdefgh');
    expect(paintLine([{ text: 'abcdefgh' }, { text: 'x' }], 8, { styles: false })).toBe('abcdefg…');
    expect(paintLine([{ text: 'evil\u001B[2Jtext\u0007' }], 40, { styles: false })).toBe('evil[2Jtext');
  });

  it('styles segments with SGR codes and resets after each', () => {
    expect(
      paintLine([{ text: 'ok', color: 'green', bold: true }, { text: ' plain' }, { text: ' faint', dim: true }], 80, {
        styles: true,
      }),
    ).toBe('\u001B[1;32mok\u001B[0m plain\u001B[2m faint\u001B[0m');
    expect(paintLine([{ text: 'ok', color: 'green', bold: true }], 80, { styles: false })).toBe('ok');
  });
});
