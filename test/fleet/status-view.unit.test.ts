import { describe, expect, it } from 'vitest';
import { agentRecordSchema } from '../../src/fleet/record-schema.js';
import { formatElapsedMs, formatStatus, formatTokens, statusCells, treeOrder } from '../../src/fleet/status-view.js';
import { recordInput } from '../helpers/records.js';

const T0 = Date.parse('2026-01-01T10:00:00.000Z');
const at = (s: number) => new Date(T0 + s * 1000).toISOString();
const rec = (id: string, over: Parameters<typeof recordInput>[1] = {}) =>
  agentRecordSchema.parse(recordInput(id, { createdAt: at(0), startedAt: at(0), ...over }));

describe('status view', () => {
  it('orders the tree depth-first with children under their parent; orphans show as roots', () => {
    const entries = [
      rec('b-child2', { parentId: 'a-root', rootId: 'a-root', depth: 1, createdAt: at(3) }),
      rec('a-root', { createdAt: at(1) }),
      rec('c-grand', { parentId: 'b-child1', rootId: 'a-root', depth: 2, createdAt: at(4) }),
      rec('b-child1', { parentId: 'a-root', rootId: 'a-root', depth: 1, createdAt: at(2) }),
      rec('orphan', { parentId: 'gone', rootId: 'gone', depth: 1, createdAt: at(5) }),
    ].map((record) => ({ record, unread: 0 }));
    expect(treeOrder(entries).map(({ entry, level }) => `${level}:${entry.record.id}`)).toEqual([
      '0:a-root',
      '1:b-child1',
      '2:c-grand',
      '1:b-child2',
      '0:orphan',
    ]);
  });

  it('formats tokens and durations compactly', () => {
    expect([formatTokens(950), formatTokens(1234), formatTokens(45_600), formatTokens(4_100_000)]).toEqual([
      '950',
      '1.2k',
      '46k',
      '4.1M',
    ]);
    expect([
      formatElapsedMs(850),
      formatElapsedMs(12_000),
      formatElapsedMs(184_000),
      formatElapsedMs(7_500_000),
    ]).toEqual(['850ms', '12s', '3m04s', '2h05m']);
  });

  it('a row shows state, depth, turns/max, tokens, cost, elapsed, unread and the last line with the scripted marker', () => {
    const r = rec('w-1', {
      status: 'crashed',
      exitReason: 'killed (SIGKILL)',
      finishedAt: at(75),
      depth: 2,
      turns: 9,
      taskTurns: 3,
      maxTurns: 20,
      usage: { inputTokens: 1000, outputTokens: 500, costUsd: 0.0123 },
      lastLine: '$ make test',
      background: true,
    });
    expect(statusCells({ record: r, unread: 2 }, 2, T0 + 999_000)).toEqual([
      '    w-1',
      'crashed (bg)',
      '2',
      '3/20',
      '1.5k',
      '$0.0123',
      '1m15s',
      '2',
      '[scripted] (killed (SIGKILL)) $ make test',
    ]);
  });

  it('the table aligns columns and cuts lines to the width', () => {
    const text = formatStatus([{ record: rec('lead', { status: 'working', lastLine: 'x'.repeat(200) }), unread: 0 }], {
      now: T0 + 5000,
      width: 80,
    });
    const [head, row] = text.split('\n');
    expect(head).toMatch(/^AGENT\s+STATE\s+DEPTH\s+TURNS\s+TOKENS\s+COST\s+ELAPSED\s+UNREAD\s+LAST$/);
    expect(row!.length).toBe(80);
    expect(row!.endsWith('…')).toBe(true);
    expect(row!.indexOf('working')).toBe(head!.indexOf('STATE'));
    expect(formatStatus([])).toMatch(/^No agents/);
  });
});

describe('statusWithReason', () => {
  it('says the status and why once: never the status twice', async () => {
    const { statusWithReason } = await import('../../src/fleet/record-status.js');
    expect(statusWithReason('cancelled', 'cancelled (SIGTERM)')).toBe('cancelled (SIGTERM)');
    expect(statusWithReason('failed', 'model error: 500')).toBe('failed (model error: 500)');
    expect(statusWithReason('cancelled', 'cancelled')).toBe('cancelled');
    expect(statusWithReason('completed', null)).toBe('completed');
    expect(statusWithReason('cancelled', 'window closed')).toBe('cancelled (window closed)');
  });
});
