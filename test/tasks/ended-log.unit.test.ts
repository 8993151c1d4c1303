import { readFileSync, writeFileSync } from 'node:fs';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { appendEnded, readEnded } from '../../src/tasks/ended-log.js';
import type { TaskStatus } from '../../src/tasks/task.js';
import { tempFleet, type TempFleet } from '../helpers/fleet.js';

/**
 * A board's ended log (src/tasks/ended-log.ts): the counts `task list` and `status` show come
 * from a checkpoint plus the lines after it, so a long log is not read whole; a checkpoint
 * that cannot be trusted is never believed.
 */

let f: TempFleet;
beforeEach(() => {
  f = tempFleet('flotilla-ended-');
});
afterEach(() => f.cleanup());

const statusOf = (i: number): TaskStatus => (i % 7 === 0 ? 'cancelled' : i % 5 === 0 ? 'failed' : 'done');

function finishMany(n: number): { done: number; failed: number; cancelled: number } {
  const board = f.layout.board('long');
  const want = { done: 0, failed: 0, cancelled: 0 };
  for (let i = 1; i <= n; i++) {
    const s = statusOf(i);
    appendEnded(board, s, `task-${i}`);
    want[s as keyof typeof want]++;
  }
  return want;
}

describe('the ended log (§15)', () => {
  it('a long log keeps a checkpoint; the counts and the last ids are those of every line', () => {
    const board = f.layout.board('long');
    const want = finishMany(3000);
    const checkpoint = readFileSync(`${board.dir}/ended.count`, 'utf8');
    const [offset, ...counts] = checkpoint.trim().split(' ').map(Number);
    // The checkpoint is behind the end, at a line's end, and counts what is before it.
    const log = readFileSync(board.endedLog, 'latin1');
    expect(offset).toBeGreaterThan(0);
    expect(offset).toBeLessThanOrEqual(log.length);
    expect(log[offset! - 1]).toBe('\n');
    const before = log.slice(0, offset).split('\n').filter(Boolean);
    expect(counts).toEqual(
      ['done', 'failed', 'cancelled'].map((s) => before.filter((l) => l.startsWith(`${s} `)).length),
    );
    const got = readEnded(board, 10);
    expect(got.counts).toEqual(want);
    expect(got.recent).toEqual(Array.from({ length: 10 }, (_, i) => `task-${2991 + i}`));
    expect(got.last).toBe('task-3000');
  });

  it('a checkpoint that cannot be trusted is ignored: the whole log is counted', () => {
    const board = f.layout.board('long');
    const want = finishMany(2000);
    const file = `${board.dir}/ended.count`;
    const size = readFileSync(board.endedLog).length;
    for (const bad of ['', 'garbage\n', `${size + 10} 1 1 1\n`, '5 1 0 0\n', '12 99 99 99']) {
      writeFileSync(file, bad);
      expect(readEnded(board, 3)).toEqual({
        counts: want,
        recent: ['task-1998', 'task-1999', 'task-2000'],
        last: 'task-2000',
      });
    }
  });

  it('a short log and an empty one', () => {
    const board = f.layout.board('short');
    expect(readEnded(board, 10)).toEqual({ counts: { done: 0, failed: 0, cancelled: 0 }, recent: [], last: undefined });
    appendEnded(board, 'done', 'a');
    appendEnded(board, 'failed', 'b');
    // A line being appended (no newline yet) is not there.
    writeFileSync(board.endedLog, 'cancelled c', { flag: 'a' });
    expect(readEnded(board, 10)).toEqual({
      counts: { done: 1, failed: 1, cancelled: 0 },
      recent: ['a', 'b'],
      last: 'b',
    });
  });
});
