import { describe, expect, it } from 'vitest';
import { DEFAULT_DENY_REASON, InterruptTracker, parseApprovalAnswer } from '../../src/harness/repl-input.js';

describe('parseApprovalAnswer', () => {
  it.each([
    ['y', { requestId: 'r', decision: 'approve', scope: 'once' }],
    [' YES ', { requestId: 'r', decision: 'approve', scope: 'once' }],
    ['a', { requestId: 'r', decision: 'approve', scope: 'always' }],
    ['always', { requestId: 'r', decision: 'approve', scope: 'always' }],
    ['n', { requestId: 'r', decision: 'deny', reason: DEFAULT_DENY_REASON }],
    ['n too risky', { requestId: 'r', decision: 'deny', reason: 'too risky' }],
    ['no  use make clean ', { requestId: 'r', decision: 'deny', reason: 'use make clean' }],
  ])('%j', (line, expected) => {
    expect(parseApprovalAnswer(line, 'r')).toEqual(expected);
  });

  it.each(['', 'maybe', 'y please', 'yes sir'])('%j asks again', (line) => {
    expect(parseApprovalAnswer(line, 'r')).toEqual({
      error: expect.stringMatching(/^answer y .*n <reason>$/) as unknown,
    });
  });
});

describe('InterruptTracker', () => {
  it('once while working aborts; again soon after exits', () => {
    const t = new InterruptTracker();
    expect(t.press(1000, { busy: true, lineEmpty: true })).toBe('abort');
    expect(t.press(2500, { busy: false, lineEmpty: false })).toBe('exit');
  });

  it('a second press long after the first aborts again', () => {
    const t = new InterruptTracker();
    expect(t.press(1000, { busy: true, lineEmpty: true })).toBe('abort');
    expect(t.press(10_000, { busy: true, lineEmpty: true })).toBe('abort');
  });

  it('idle: an empty line exits, a half-typed line is cleared first', () => {
    expect(new InterruptTracker().press(0, { busy: false, lineEmpty: true })).toBe('exit');
    const t = new InterruptTracker();
    expect(t.press(0, { busy: false, lineEmpty: false })).toBe('clear_line');
    expect(t.press(500, { busy: false, lineEmpty: true })).toBe('exit');
  });
});
