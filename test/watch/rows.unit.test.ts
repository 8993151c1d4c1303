import { describe, expect, it } from 'vitest';
import type { AgentRecord } from '../../src/fleet/record.js';
import { agentRecordSchema } from '../../src/fleet/record-schema.js';
import { layoutColumns, rowText, scrollTop, formatElapsed } from '../../src/watch/format.js';
import {
  buildSnapshot,
  pendingApprovals,
  sameSnapshot,
  stateOf,
  treeBranches,
  type PendingApproval,
  type Snapshot,
} from '../../src/watch/rows.js';
import { initialUi, reduceKey, type UiState } from '../../src/watch/keys.js';
import { recordInput } from '../helpers/records.js';

const T0 = Date.parse('2026-01-01T10:00:00.000Z');
const iso = (ms: number): string => new Date(T0 + ms).toISOString();

function rec(id: string, over: Partial<AgentRecord> = {}): AgentRecord {
  return agentRecordSchema.parse(recordInput(id, { createdAt: iso(0), startedAt: iso(0), status: 'working', ...over }));
}

function snapshot(
  records: AgentRecord[],
  opts: { approvals?: PendingApproval[]; unread?: Record<string, number>; now?: number } = {},
): Snapshot {
  return buildSnapshot({
    records,
    unread: new Map(Object.entries(opts.unread ?? {})),
    approvals: opts.approvals ?? [],
    liveness: (r) =>
      ['completed', 'failed', 'cancelled', 'timed_out', 'crashed', 'refused'].includes(r.status) ? 'ended' : 'live',
    now: opts.now ?? T0 + 12_000,
  });
}

const fleet = (): AgentRecord[] => [
  rec('lead-aaaaaa', {
    createdAt: iso(0),
    turns: 3,
    taskTurns: 3,
    usage: { inputTokens: 4000, outputTokens: 700, costUsd: null },
  }),
  rec('lead-aaaaaa-todos', {
    parentId: 'lead-aaaaaa',
    rootId: 'lead-aaaaaa',
    depth: 1,
    createdAt: iso(100),
    status: 'completed',
    finishedAt: iso(4000),
  }),
  rec('lead-aaaaaa-check', {
    parentId: 'lead-aaaaaa',
    rootId: 'lead-aaaaaa',
    depth: 1,
    createdAt: iso(200),
    status: 'waiting_approval',
  }),
  rec('deep-bbbbbb', { parentId: 'lead-aaaaaa-todos', rootId: 'lead-aaaaaa', depth: 2, createdAt: iso(300) }),
  rec('other-cccccc', {
    createdAt: iso(50),
    scripted: false,
    model: 'anthropic:claude-sonnet-4-5',
    usage: { inputTokens: 10, outputTokens: 5, costUsd: 0.0123 },
  }),
];

describe('rows', () => {
  it('puts children under their parent, oldest first, with tree branches', () => {
    const snap = snapshot(fleet());
    expect(snap.rows.map((r) => `${r.branch}${r.id}`)).toEqual([
      'lead-aaaaaa',
      '├ lead-aaaaaa-todos',
      '│ └ deep-bbbbbb',
      '└ lead-aaaaaa-check',
      'other-cccccc',
    ]);
  });

  it('draws branches for any depth-first level list', () => {
    expect(treeBranches([0, 1, 2, 2, 1, 0, 1])).toEqual(['', '├ ', '│ ├ ', '│ └ ', '└ ', '', '└ ']);
  });

  it('shows a child whose parent record is gone as a root', () => {
    const snap = snapshot([rec('orphan-dddddd', { parentId: 'gone-eeeeee', depth: 1 })]);
    expect(snap.rows[0]!.branch).toBe('');
  });

  it('carries tokens, elapsed (stopped at the end), unread mail and approvals', () => {
    const approval: PendingApproval = {
      requestId: 'req0000001',
      agentId: 'lead-aaaaaa-check',
      tool: 'shell',
      summary: 'lead-aaaaaa-check asks to run $ npm publish',
      timestamp: iso(500),
    };
    const snap = snapshot(fleet(), { approvals: [approval], unread: { 'lead-aaaaaa': 2 } });
    const byId = new Map(snap.rows.map((r) => [r.id, r]));
    expect(byId.get('lead-aaaaaa')).toMatchObject({ tokens: 4700, unread: 2, elapsedMs: 12_000, approval: null });
    expect(byId.get('lead-aaaaaa-todos')).toMatchObject({ elapsedMs: 4000, state: 'completed', tone: 'ok' });
    expect(byId.get('lead-aaaaaa-check')).toMatchObject({
      state: 'approval?',
      tone: 'waiting',
      approval: { requestId: 'req0000001' },
    });
  });

  it('names the state a person reads', () => {
    expect(stateOf({ status: 'idle', lastTask: null })).toEqual({ state: 'idle', tone: 'idle' });
    const done = { task: 1, status: 'completed' as const, exitReason: null, finishedAt: iso(1), outputPath: null };
    expect(stateOf({ status: 'idle', lastTask: done }).state).toBe('idle ✓');
    expect(stateOf({ status: 'idle', lastTask: { ...done, status: 'failed' } }).state).toBe('idle ✗');
    expect(stateOf({ status: 'working', lastTask: null }, true)).toEqual({ state: 'working†', tone: 'bad' });
    expect(stateOf({ status: 'crashed', lastTask: null }).tone).toBe('bad');
  });
});

describe('pending approvals', () => {
  const req = (id: string, agent: string, at: number): PendingApproval => ({
    requestId: id,
    agentId: agent,
    tool: 'shell',
    summary: `${agent} asks to run $ ls`,
    timestamp: iso(at),
  });

  it('keeps only the latest request of an agent that is waiting and unanswered', () => {
    const all = [
      req('r1aaaaaaaa', 'a', 1),
      req('r2aaaaaaaa', 'a', 2),
      req('r3aaaaaaaa', 'b', 3),
      req('r4aaaaaaaa', 'c', 4),
    ];
    const status = new Map([
      ['a', 'waiting_approval'],
      ['b', 'working'],
      ['c', 'waiting_approval'],
    ] as const);
    const open = pendingApprovals(
      all,
      (id) => status.get(id as 'a'),
      (r) => r === 'r4aaaaaaaa',
    );
    expect(open.map((o) => o.requestId)).toEqual(['r2aaaaaaaa']);
  });
});

describe('layout at 80 columns', () => {
  it('never makes a line wider than the terminal, and drops the cost column when no cost is known', () => {
    const records = fleet();
    const withCost = layoutColumns(80, snapshot(records).rows);
    expect(withCost.map((c) => c.key)).toContain('cost');
    const scriptedOnly = snapshot(records.filter((r) => r.usage.costUsd === null));
    const cols = layoutColumns(80, scriptedOnly.rows);
    expect(cols.map((c) => c.key)).not.toContain('cost');
    const long = rec('x'.repeat(60), { lastLine: 'y'.repeat(300) });
    for (const width of [80, 100, 60]) {
      const rows = snapshot([...records, long]).rows;
      const c = layoutColumns(width, rows);
      for (const r of rows) expect(rowText(r, c, true).length).toBeLessThanOrEqual(width - 1);
    }
  });

  it('prints state, turns, tokens, time, mail and the scripted marker', () => {
    const rows = snapshot(fleet(), { unread: { 'lead-aaaaaa': 2 } }).rows;
    const text = rowText(rows[0]!, layoutColumns(80, rows), true);
    expect(text).toMatch(/^› lead-aaaaaa \*\s+working\s+3\/20\s+4\.7k\s+–\s+12s\s+✉2/);
  });

  it('shows whole seconds only, so a redraw follows a visible change', () => {
    expect(formatElapsed(450)).toBe('0s');
    expect(formatElapsed(12_400)).toBe('12s');
    expect(formatElapsed(184_000)).toBe('3m04s');
  });

  it('scrolls to keep the selection visible', () => {
    expect(scrollTop(0, 5, 10)).toBe(0);
    expect(scrollTop(15, 30, 10, 0)).toBe(6);
    expect(scrollTop(3, 30, 10, 6)).toBe(3);
    expect(scrollTop(29, 30, 10, 0)).toBe(20);
  });
});

describe('sameSnapshot', () => {
  it('is true when only invisible things change (elapsed within the same second)', () => {
    const a = snapshot(fleet(), { now: T0 + 12_100 });
    const b = snapshot(fleet(), { now: T0 + 12_900 });
    expect(sameSnapshot(a, b, formatElapsed)).toBe(true);
    const c = snapshot(fleet(), { now: T0 + 13_100 });
    expect(sameSnapshot(a, c, formatElapsed)).toBe(false);
    const changed = fleet();
    changed[0] = { ...changed[0]!, lastLine: 'new' };
    expect(sameSnapshot(a, snapshot(changed, { now: T0 + 12_100 }), formatElapsed)).toBe(false);
  });
});

describe('keys', () => {
  const snap = snapshot(fleet(), {
    approvals: [
      {
        requestId: 'req0000001',
        agentId: 'lead-aaaaaa-check',
        tool: 'shell',
        summary: 'x asks to run $ ls',
        timestamp: iso(1),
      },
    ],
  });
  const press = (ui: UiState, input: string, key = {}) => reduceKey(ui, input, key, snap);
  const lead: UiState = { ...initialUi, selectedId: 'lead-aaaaaa' };

  it('moves with j/k and arrows, clamped at the ends', () => {
    // The agent waiting for an approval comes first (attention.ts), the tree after it.
    let ui = press(initialUi, 'j').ui;
    expect(ui.selectedId).toBe('lead-aaaaaa');
    ui = press(ui, '', { downArrow: true }).ui;
    expect(ui.selectedId).toBe('lead-aaaaaa-todos');
    ui = press(ui, 'G').ui;
    ui = press(ui, 'j').ui;
    expect(ui.selectedId).toBe('other-cccccc');
    ui = press(ui, '', { upArrow: true }).ui;
    expect(ui.selectedId).toBe('deep-bbbbbb');
    expect(press(initialUi, 'k').ui.selectedId).toBe('lead-aaaaaa-check');
  });

  it('attaches on Enter and quits on q', () => {
    expect(press(lead, '', { return: true }).effect).toMatchObject({ kind: 'attach', row: { id: 'lead-aaaaaa' } });
    expect(press(lead, 'q').effect).toEqual({ kind: 'quit' });
  });

  it('m opens a prompt line; typing, backspace, Enter sends; Esc drops it', () => {
    let ui = press(lead, 'm').ui;
    expect(ui.mode).toEqual({ kind: 'message', id: 'lead-aaaaaa', text: '' });
    for (const ch of ['h', 'i', 'x']) ui = press(ui, ch).ui;
    ui = press(ui, '', { backspace: true }).ui;
    ui = press(ui, ' there').ui;
    const sent = press(ui, '', { return: true });
    expect(sent.effect).toMatchObject({ kind: 'send', row: { id: 'lead-aaaaaa' }, text: 'hi there' });
    expect(sent.ui.mode.kind).toBe('browse');
    // Text and its Enter in one read (fast typing, a busy machine) still send.
    const oneRead = press(press(lead, 'm').ui, 'all at once\r');
    expect(oneRead.effect).toMatchObject({ kind: 'send', text: 'all at once' });
    // A pasted line break inside the text stays on one line.
    expect(press(press(lead, 'm').ui, 'a\nb').ui.mode).toMatchObject({ text: 'a b' });
    const dropped = press(press(lead, 'm').ui, '', { escape: true });
    expect(dropped.effect).toBeUndefined();
    expect(dropped.ui.flash).toBe('message not sent');
    expect(press(press(lead, 'm').ui, 'q').effect).toBeUndefined();
  });

  it('c asks y/n before cancelling, and refuses an ended agent', () => {
    const asking = press(lead, 'c').ui;
    expect(asking.mode).toEqual({ kind: 'confirm-cancel', id: 'lead-aaaaaa' });
    expect(press(asking, 'y').effect).toMatchObject({ kind: 'cancel', row: { id: 'lead-aaaaaa' } });
    const no = press(asking, 'n');
    expect(no.effect).toBeUndefined();
    expect(no.ui.flash).toBe('not cancelled');
    const onEnded = press({ ...initialUi, selectedId: 'lead-aaaaaa-todos' }, 'c');
    expect(onEnded.effect).toBeUndefined();
    expect(onEnded.ui.flash).toMatch(/already ended \(completed\)/);
  });

  it("a approves and d asks for a reason before denying the selected agent's request", () => {
    const on = { ...initialUi, selectedId: 'lead-aaaaaa-check' };
    expect(press(on, 'a').effect).toMatchObject({ kind: 'approve', approval: { requestId: 'req0000001' } });
    let ui = press(on, 'd').ui;
    expect(ui.mode.kind).toBe('deny');
    for (const ch of 'no') ui = press(ui, ch).ui;
    expect(press(ui, '', { return: true }).effect).toMatchObject({
      kind: 'deny',
      reason: 'no',
      approval: { requestId: 'req0000001' },
    });
  });

  it('with a single open request anywhere, a answers it from any row; with none it says so', () => {
    expect(press(initialUi, 'a').effect).toMatchObject({ kind: 'approve' });
    const none = reduceKey(initialUi, 'a', {}, snapshot(fleet()));
    expect(none.effect).toBeUndefined();
    expect(none.ui.flash).toBe('lead-aaaaaa has no pending approval');
  });
});
