import { describe, expect, it } from 'vitest';
import type { AgentRecord } from '../../src/fleet/record.js';
import { agentRecordSchema } from '../../src/fleet/record-schema.js';
import { nextNeedy } from '../../src/watch/attention.js';
import { initialUi, reduceInput, reduceKey, type UiState } from '../../src/watch/keys.js';
import { plainLine } from '../../src/watch/paint.js';
import { buildSnapshot, type PendingApproval, type Snapshot } from '../../src/watch/rows.js';
import { AttentionSignal, NEEDS_OPTION, needsText, type SignalTmux } from '../../src/watch/signal.js';
import { dashboardView, KEYS } from '../../src/watch/view.js';
import { recordInput } from '../helpers/records.js';

const T0 = Date.parse('2026-01-01T10:00:00.000Z');
const iso = (ms: number): string => new Date(T0 + ms).toISOString();

function rec(id: string, over: Partial<AgentRecord> = {}): AgentRecord {
  return agentRecordSchema.parse(recordInput(id, { createdAt: iso(0), startedAt: iso(0), status: 'working', ...over }));
}

const ENDED = ['completed', 'failed', 'cancelled', 'timed_out', 'crashed', 'refused'];

interface Facts {
  approvals?: PendingApproval[];
  asks?: Record<string, number>;
  queue?: { agentId: string | null; pid: number; position: number }[];
  seen?: Record<string, string>;
  dead?: string[];
}

function snapshot(records: AgentRecord[], f: Facts = {}): Snapshot {
  return buildSnapshot({
    records,
    unread: new Map(),
    approvals: f.approvals ?? [],
    now: T0 + 5_000,
    liveness: (r) => (f.dead?.includes(r.id) ? 'dead' : ENDED.includes(r.status) ? 'ended' : 'live'),
    asks: new Map(Object.entries(f.asks ?? {})),
    queue: f.queue ?? [],
    seen: new Map(Object.entries(f.seen ?? {})),
  });
}

const approval = (agentId: string, requestId = `req-${agentId}`): PendingApproval => ({
  requestId,
  agentId,
  tool: 'shell',
  summary: `${agentId} asks to run $ npm publish`,
  timestamp: iso(10),
});

/** A fleet with one of each need, listed in tree order oldest first, none in attention order. */
function mixed(f: Facts = {}): Snapshot {
  return snapshot(
    [
      rec('calm-aaaaaa', { createdAt: iso(0) }),
      rec('waits-bbbbbb', { createdAt: iso(1), status: 'queued', lastLine: 'waiting for a slot 2/2' }),
      rec('broke-cccccc', {
        createdAt: iso(2),
        status: 'failed',
        finishedAt: iso(3000),
        exitReason: 'model error: 500',
      }),
      rec('writes-dddddd', { createdAt: iso(3), status: 'idle' }),
      rec('asks-eeeeee', { createdAt: iso(4), status: 'waiting_approval' }),
      rec('done-ffffff', { createdAt: iso(5), status: 'completed', finishedAt: iso(4000) }),
    ],
    {
      approvals: [approval('asks-eeeeee')],
      asks: { 'writes-dddddd': 1 },
      queue: [
        { agentId: 'later-gggggg', pid: 41, position: 1 },
        { agentId: 'waits-bbbbbb', pid: 42, position: 2 },
      ],
      ...f,
    },
  );
}

describe('what needs a person', () => {
  it('lists approvals, mail for you, failures and the line for slots first, in that order, marked; the rest in tree order', () => {
    const snap = mixed();
    expect(snap.rows.map((r) => [r.id, r.need?.kind ?? null])).toEqual([
      ['asks-eeeeee', 'approval'],
      ['writes-dddddd', 'asks'],
      ['broke-cccccc', 'failed'],
      // A spawn-agent --queue not started yet is a row of its own, with its place.
      ['later-gggggg', 'queued'],
      ['waits-bbbbbb', 'queued'],
      ['calm-aaaaaa', null],
      ['done-ffffff', null],
    ]);
    expect(snap.needs).toBe(5);
    const byId = new Map(snap.rows.map((r) => [r.id, r]));
    expect(byId.get('waits-bbbbbb')).toMatchObject({ state: 'queued #2', queuePosition: 2, pending: false });
    expect(byId.get('later-gggggg')).toMatchObject({ state: 'queued #1', pending: true, tmux: null });
    expect(byId.get('writes-dddddd')!.state).toBe('asks you');
    expect(byId.get('broke-cccccc')!.need!.hint).toBe(
      "model error: 500 — read it with 'flotilla transcript broke-cccccc'",
    );

    const lines = dashboardView(snap, initialUi, { columns: 100, rows: 30 }, 't').lines.map((l) => plainLine(l));
    expect(lines[0]).toContain('5 need you (n)');
    // Each row that needs you carries a mark after the selection marker; the others do not.
    expect(lines.find((l) => l.includes('asks-eeeeee'))).toMatch(/^›!asks-eeeeee \*\s+approval\?/);
    expect(lines.find((l) => l.includes('later-gggggg'))).toMatch(/^ !later-gggggg\s+queued #1/);
    expect(lines.find((l) => l.includes('calm-aaaaaa'))).toMatch(/^ {2}calm-aaaaaa/);
  });

  it('a failure a person has seen no longer needs them; a later failure of the same agent does again', () => {
    const failed = rec('broke-cccccc', { status: 'failed', finishedAt: iso(3000) });
    const first = snapshot([failed]);
    const stamp = first.rows[0]!.need!.stamp;
    expect(snapshot([failed], { seen: { 'broke-cccccc': stamp } }).needs).toBe(0);
    // A persistent agent whose next task fails has a new stamp.
    const idle = rec('broke-cccccc', {
      status: 'idle',
      lastTask: { task: 2, status: 'failed', exitReason: 'x', finishedAt: iso(9000), outputPath: null },
    });
    expect(snapshot([idle], { seen: { 'broke-cccccc': stamp } }).rows[0]!.need).toMatchObject({
      kind: 'failed',
      mark: 'idle ✗',
    });
    // A harness that died before its record ended is a crash.
    expect(snapshot([rec('gone-hhhhhh')], { dead: ['gone-hhhhhh'] }).rows[0]!.need).toMatchObject({
      kind: 'failed',
      mark: 'crashed',
    });
    // Cancelled and completed work needs nobody.
    expect(
      snapshot([
        rec('x-iiiiii', { status: 'cancelled' }),
        rec('y-jjjjjj', {
          status: 'idle',
          lastTask: { task: 1, status: 'cancelled', exitReason: null, finishedAt: iso(1), outputPath: null },
        }),
      ]).needs,
    ).toBe(0);
  });

  it('nextNeedy walks the agents that need you from the current one, wrapping round', () => {
    const rows = mixed().rows;
    expect(nextNeedy(rows, null)?.id).toBe('asks-eeeeee');
    expect(nextNeedy(rows, 'asks-eeeeee')?.id).toBe('writes-dddddd');
    expect(nextNeedy(rows, 'waits-bbbbbb')?.id).toBe('asks-eeeeee');
    // From a row that needs nothing: the first.
    expect(nextNeedy(rows, 'calm-aaaaaa')?.id).toBe('asks-eeeeee');
    expect(nextNeedy(snapshot([rec('calm-aaaaaa')]).rows, null)).toBeUndefined();
  });
});

describe('keys for attention', () => {
  const snap = mixed();
  const press = (ui: UiState, input: string) => reduceKey(ui, input, {}, snap);

  it('n selects the next agent that needs you and says what to do; on a failure it marks it seen', () => {
    const calm = { ...initialUi, selectedId: 'calm-aaaaaa' };
    let r = press(calm, 'n');
    expect(r.ui.selectedId).toBe('asks-eeeeee');
    expect(r.ui.flash).toBe(
      'asks-eeeeee approve?: answer with flotilla approve|deny req-asks-eeeeee, a/d in the dashboard, y/n in its window',
    );
    expect(r.effect).toBeUndefined();
    r = press(r.ui, 'n');
    expect(r.ui.selectedId).toBe('writes-dddddd');
    expect(r.ui.flash).toBe("writes-dddddd asks you: it wrote to you — read it with 'flotilla inbox'");
    r = press(r.ui, 'n');
    expect(r.ui.selectedId).toBe('broke-cccccc');
    expect(r.effect).toMatchObject({ kind: 'seen', row: { id: 'broke-cccccc' } });
    // `nn` in one read moves twice.
    expect(reduceInput(calm, 'nn', {}, snap).ui.selectedId).toBe('writes-dddddd');
    const none = reduceKey(calm, 'n', {}, snapshot([rec('calm-aaaaaa')]));
    expect(none.ui.flash).toBe('nothing needs you');
  });

  it('? shows every key, and any key closes it without acting', () => {
    const help = press(initialUi, '?').ui;
    expect(help.mode.kind).toBe('help');
    const lines = dashboardView(snap, help, { columns: 100, rows: 30 }, 't').lines.map((l) => plainLine(l));
    for (const [key] of KEYS) expect(lines.some((l) => l.trimStart().startsWith(key))).toBe(true);
    expect(lines.join('\n')).toMatch(/next agent that needs you/);
    const closed = press(help, 'q');
    expect(closed.effect).toBeUndefined();
    expect(closed.ui.mode.kind).toBe('browse');
  });
});

describe('a list taller than the window', () => {
  it('says how many rows are below and above it', () => {
    const many = snapshot(
      Array.from({ length: 40 }, (_, i) => rec(`agent-${String(i).padStart(6, '0')}`, { createdAt: iso(i) })),
    );
    const at = (ui: UiState, prev = 0) => dashboardView(many, ui, { columns: 80, rows: 20 }, 't', prev);
    const top = at(initialUi).lines.map((l) => plainLine(l));
    const shown = top.filter((l) => / agent-\d{6}/.test(l)).length;
    expect(top.some((l) => l.includes(`↓ ${40 - shown} more below`))).toBe(true);
    const middle = at({ ...initialUi, selectedId: 'agent-000025' });
    const text = middle.lines.map((l) => plainLine(l));
    expect(
      text.some((l) => new RegExp(`↓ ${40 - shown - middle.top} more below · ↑ ${middle.top} above`).test(l)),
    ).toBe(true);
    // All rows fit: a blank line, no count.
    expect(
      dashboardView(snapshot([rec('one-aaaaaa')]), initialUi, { columns: 80, rows: 20 }, 't')
        .lines.map((l) => plainLine(l))
        .join('\n'),
    ).not.toMatch(/more below|above/);
  });
});

describe('the status count and the bell', () => {
  function fakeTmux(statusRight = '') {
    const calls: string[][] = [];
    const options = new Map<string, string>([['status-right', statusRight]]);
    const tmux: SignalTmux = {
      exec(args) {
        calls.push([...args]);
        if (args[0] === 'show-options') {
          const global = args[1] === '-gv';
          const name = args.at(-1)!;
          const v = global
            ? name === 'status-right-length'
              ? '40'
              : '"#{=21:pane_title}" %H:%M'
            : (options.get(name) ?? '');
          return Promise.resolve({ code: 0, stdout: v + '\n', stderr: '' });
        }
        if (args[0] === 'set-option') options.set(args[3]!, args[4]!);
        return Promise.resolve({ code: 0, stdout: '', stderr: '' });
      },
    };
    return { tmux, calls, options };
  }

  it('keeps the session option the status line reads, and rings once for each need that appears while it runs', async () => {
    const t = fakeTmux();
    let rings = 0;
    const signal = new AttentionSignal({ session: 'flotilla-x-abc123', tmux: t.tmux, ring: () => rings++ });
    const calm = snapshot([rec('calm-aaaaaa')]);
    signal.update(mixed());
    await signal.settled();
    // Needs present when the dashboard starts do not ring.
    expect(rings).toBe(0);
    expect(t.options.get(NEEDS_OPTION)).toBe('⚑ 5 need you');
    expect(t.options.get('status-right')).toBe(
      `#{?${NEEDS_OPTION},#[reverse]#{${NEEDS_OPTION}}#[noreverse] ,}"#{=21:pane_title}" %H:%M`,
    );
    expect(t.calls.filter((c) => c[0] === 'set-option').every((c) => c[2] === '=flotilla-x-abc123:')).toBe(true);
    signal.update(mixed());
    expect(rings).toBe(0);
    // A new approval appears: one ring.
    signal.update(mixed({ approvals: [approval('asks-eeeeee'), approval('calm-aaaaaa')] }));
    expect(rings).toBe(1);
    signal.update(calm);
    await signal.settled();
    expect(t.options.get(NEEDS_OPTION)).toBe('');
    expect(rings).toBe(1);
    expect(needsText(1)).toBe('⚑ 1 needs you');
  });

  it('with the bell off, it never rings; without tmux, it only rings', async () => {
    const t = fakeTmux();
    const quiet = new AttentionSignal({ session: 's', tmux: t.tmux, ring: null });
    quiet.update(snapshot([]));
    quiet.update(mixed());
    await quiet.settled();
    expect(t.options.get(NEEDS_OPTION)).toBe('⚑ 5 need you');
    let rings = 0;
    const bare = new AttentionSignal({ session: null, tmux: null, ring: () => rings++ });
    bare.update(snapshot([]));
    bare.update(mixed());
    await bare.settled();
    expect(rings).toBe(1);
  });
});
