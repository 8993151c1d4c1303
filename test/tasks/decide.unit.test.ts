import { describe, expect, it } from 'vitest';
import * as decide from '../../src/tasks/decide.js';
import type { Task } from '../../src/tasks/task.js';

/** The board decisions both stores share (board files and the bus's bucket, docs/design.md §15). */
describe('board decisions', () => {
  const add = (id: string, spec: decide.NewTask = { title: 'x' }): Task =>
    decide.newTask('main', id, decide.checkNewTask(spec), spec, 'lead');

  it('a new task is open and unclaimed; a blank title and a cycle are refused with what to do', () => {
    const t = add('t1', { title: '  parse  ', blockedBy: ['t0', 't0'], labels: ['a', 'a'] });
    expect(t).toMatchObject({ status: 'open', title: 'parse', blocked_by: ['t0'], labels: ['a'], claimed_by: null });
    expect(() => decide.checkNewTask({ title: ' ' })).toThrow(/needs a title/);
    expect(() => decide.checkNoCycle('t1', ['t1'], () => [])).toThrow(/cannot be blocked by itself/);
    expect(() => decide.checkNoCycle('t1', ['t2'], (id) => (id === 't2' ? ['t1'] : []))).toThrow(/t1 → t2 → t1/);
  });

  it('a claim waits on unfinished blockers and names the holder of a claimed task', () => {
    const dep = add('t0');
    const t = add('t1', { title: 'x', blockedBy: ['t0'] });
    expect(() => decide.claimed(t, 'a', (id) => (id === 't0' ? dep : undefined))).toThrow(/blocked by unfinished t0/);
    const done = decide.ended({ ...dep, status: 'claimed', claimed_by: 'a' }, 'done', 'ok');
    const mine = decide.claimed(t, 'a', () => done);
    expect(mine).toMatchObject({ status: 'claimed', claimed_by: 'a' });
    expect(() => decide.claimed(mine, 'b', () => done)).toThrow(/already claimed by a/);
  });

  it('only the claimant or a person ends or releases a claim; only the creator or a person cancels', () => {
    const t = decide.claimed(add('t1'), 'a', () => undefined);
    expect(() => decide.checkEnding(t, 'b', 'done')).toThrow(/only its claimant \(a\) or a person may mark done/);
    expect(() => decide.checkEnding(t, 'human', 'done')).not.toThrow();
    expect(() => decide.checkEnding(t, 'a', 'cancelled')).toThrow(/creator \(lead\)/);
    expect(() => decide.released(t, 'b')).toThrow(/may release/);
    expect(decide.released(t, 'a', 'stuck')).toMatchObject({ status: 'open', claimed_by: null });
    expect(() => decide.checkEnding(decide.ended(t, 'done', 'ok'), 'a', 'done')).toThrow(/already done/);
  });

  it('a refused completion is noted and stays claimed; the claimant is told only when someone else marked it', () => {
    const t = decide.claimed(add('t1'), 'a', () => undefined);
    const noted = decide.refusedNoted(t, 'tests fail');
    expect(noted).toMatchObject({ status: 'claimed', claimed_by: 'a' });
    expect(noted.notes.at(-1)?.text).toBe('completion refused: tests fail');
    expect(decide.claimantToTell(t, 'a')).toBeNull();
    expect(decide.claimantToTell(t, 'human')).toBe('a');
    expect(decide.refusalMail(t, 'human', 'tests fail')).toMatchObject({ to: 'a', kind: 'system' });
  });
});
