import { describe, expect, it } from 'vitest';
import type { AgentRecord } from '../../src/fleet/record.js';
import { parseAgentRecord } from '../../src/fleet/record-validate.generated.js';
import { withOtherHosts } from '../../src/watch/host-rows.js';
import { initialUi } from '../../src/watch/keys.js';
import { plainLine } from '../../src/watch/paint.js';
import { sameSnapshot, type Snapshot, type WatchRow } from '../../src/watch/rows.js';
import { dashboardView } from '../../src/watch/view.js';
import { formatElapsed } from '../../src/watch/format.js';
import { recordInput } from '../helpers/records.js';

/**
 * The dashboard on a bus (docs/design.md §17.6): this host's rows under its heading, then
 * each other host's agents under the heading `flotilla status` gives it, and the frame keeps
 * every heading in its height.
 */
const NOW = Date.parse('2026-01-01T12:00:00Z');

/** A record as another host's reads from the bus: parsed, defaults filled in. */
function rec(id: string, over: Partial<AgentRecord> = {}): AgentRecord {
  const parsed = parseAgentRecord({
    ...recordInput(id, { status: 'idle', createdAt: new Date(NOW - 60_000).toISOString() }),
    host: 'r1',
    ...over,
  });
  if (!parsed.success) throw new Error(`bad test record ${id}`);
  return parsed.data;
}

function local(id: string): WatchRow {
  return {
    id,
    name: 'worker',
    depth: 0,
    branch: '',
    status: 'working',
    state: 'working',
    tone: 'live',
    dead: false,
    turns: 1,
    maxTurns: 20,
    tokens: 10,
    costUsd: null,
    elapsedMs: 1_000,
    unread: 0,
    lastLine: '',
    model: 'script:x.yaml',
    scripted: true,
    runtime: 'flotilla',
    approval: null,
    secrets: '',
    tmux: null,
    pid: 1,
    need: null,
    queuePosition: null,
    pending: false,
  };
}

const here = (rows: WatchRow[]): Snapshot => ({ rows, humanUnread: 0, approvals: [], needs: 0 });
const beat = (host: string, ageMs: number, lost = false) => ({
  host,
  at: new Date(NOW - ageMs).toISOString(),
  ageMs,
  lost,
  lostAfterMs: 30_000,
  self: false,
});
const screen = (s: Snapshot, rows = 24, selectedId: string | null = null): string[] =>
  dashboardView(s, { ...initialUi, selectedId }, { columns: 100, rows }, 'flotilla · demo').lines.map((l) =>
    plainLine(l).trimEnd(),
  );

describe('the dashboard grouped by host', () => {
  it("this host's heading first, then each other host's agents in tree order under its heartbeat or LOST", () => {
    const s = withOtherHosts(
      here([local('mine-aaaaaa')]),
      'here',
      [
        {
          host: 'r1',
          beat: beat('r1', 2_400),
          records: [
            rec('far-bbbbbb', { status: 'working' }),
            rec('kid-cccccc', {
              parentId: 'far-bbbbbb',
              rootId: 'far-bbbbbb',
              depth: 1,
              status: 'failed',
              finishedAt: new Date(NOW).toISOString(),
            }),
          ],
        },
        { host: 'r2', beat: beat('r2', 45_000, true), records: [] },
      ],
      NOW,
    );
    expect(s.rows.map((r) => [r.id, r.host ?? null])).toEqual([
      ['mine-aaaaaa', null],
      ['far-bbbbbb', 'r1'],
      ['kid-cccccc', 'r1'],
    ]);
    // Another host's failure is not this host's to mark: no `!`, its state as status shows it.
    expect(s.rows[2]).toMatchObject({ need: null, state: 'failed', tone: 'bad', branch: '└ ', dead: false });
    const lines = screen(s);
    const at = (text: string) => lines.findIndex((l) => l.startsWith(text));
    expect(at('Host here (this machine)')).toBe(2);
    expect(lines[3]).toMatch(/^› mine-aaaaaa \*\s+working/);
    expect(lines[4]).toBe('Host r1 — heartbeat 2 s ago');
    expect(lines[5]).toMatch(/^ {2}far-bbbbbb \*\s+working/);
    expect(lines[6]).toMatch(/^ {2}└ kid-cccccc \*\s+failed/);
    expect(lines[7]).toBe('Host r2 — LOST: no heartbeat for 45 s · no agents');
  });

  it("an unreadable bus is said in this host's heading; a host with records but no heartbeat is LOST", () => {
    expect(screen(withOtherHosts(here([]), 'here', null, NOW))[2]).toBe(
      'Host here (this machine) — the bus is unreachable: other hosts not shown · no agents',
    );
    const s = withOtherHosts(
      here([]),
      'here',
      [{ host: 'r3', beat: null, records: [rec('far-dddddd', { host: 'r3' })] }],
      NOW,
    );
    expect(s.hosts?.[1]).toMatchObject({ host: 'r3', lost: true, first: 0, count: 1 });
    expect(screen(s).slice(2, 5)).toEqual([
      'Host here (this machine) · no agents',
      'Host r3 — LOST: no heartbeat on the bus',
      expect.stringMatching(/^› far-dddddd/) as string,
    ]);
  });

  it("another host's finished agents are windowed as status windows them: its live ones and the 100 that ended last", () => {
    const done = Array.from({ length: 103 }, (_, i) =>
      rec(`old-${String(i).padStart(6, '0')}`, {
        status: 'completed',
        finishedAt: new Date(NOW - 50_000 + i).toISOString(),
      }),
    );
    const s = withOtherHosts(
      here([]),
      'here',
      [{ host: 'r1', beat: beat('r1', 1_000), records: [...done, rec('far-ffffff', { status: 'working' })] }],
      NOW,
    );
    expect(s.rows).toHaveLength(101);
    expect(s.rows.some((r) => r.id === 'far-ffffff')).toBe(true);
    // The three that ended first are the ones left out, and the heading says so.
    expect(s.rows.filter((r) => ['old-000000', 'old-000001', 'old-000002'].includes(r.id))).toEqual([]);
    expect(s.hosts?.[1]?.heading).toBe('Host r1 — heartbeat 1 s ago · … 3 finished — flotilla status --all');
  });

  it('a change on another host, or in its heartbeat, is a new frame; the same read is not', () => {
    const one = withOtherHosts(
      here([]),
      'here',
      [{ host: 'r1', beat: beat('r1', 1_000), records: [rec('far-eeeeee')] }],
      NOW,
    );
    const same = withOtherHosts(
      here([]),
      'here',
      [{ host: 'r1', beat: beat('r1', 1_000), records: [rec('far-eeeeee')] }],
      NOW,
    );
    expect(sameSnapshot(one, same, formatElapsed)).toBe(true);
    const changed = withOtherHosts(
      here([]),
      'here',
      [{ host: 'r1', beat: beat('r1', 1_000), records: [rec('far-eeeeee', { status: 'cancelled' })] }],
      NOW,
    );
    expect(sameSnapshot(one, changed, formatElapsed)).toBe(false);
    const lost = withOtherHosts(
      here([]),
      'here',
      [{ host: 'r1', beat: beat('r1', 40_000, true), records: [rec('far-eeeeee')] }],
      NOW,
    );
    expect(sameSnapshot(one, lost, formatElapsed)).toBe(false);
  });

  it('on a short screen the headings count in its height, and the selection stays in view with its host named above it', () => {
    const many = Array.from({ length: 30 }, (_, i) =>
      rec(`far-${String(i).padStart(6, '0')}`, { createdAt: new Date(NOW - 60_000 + i).toISOString() }),
    );
    const s = withOtherHosts(
      here([local('mine-aaaaaa')]),
      'here',
      [{ host: 'r1', beat: beat('r1', 1_000), records: many }],
      NOW,
    );
    for (const selected of ['far-000000', 'far-000020', 'far-000029']) {
      const lines = screen(s, 16, selected);
      expect(lines.length).toBeLessThanOrEqual(16);
      expect(lines.some((l) => l.startsWith(`› far-${selected.slice(4)}`))).toBe(true);
    }
    // Scrolled into r1's rows, r1's heading stays above the first one shown.
    const scrolled = screen(s, 16, 'far-000029');
    expect(scrolled[2]).toBe('Host r1 — heartbeat 1 s ago');
  });
});
