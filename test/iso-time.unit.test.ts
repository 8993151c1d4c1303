import { describe, expect, it } from 'vitest';
import { isoTime } from '../src/iso-time.js';

describe('isoTime', () => {
  it('writes what toISOString writes, for the times a fleet stamps and the edges', () => {
    const times = [
      0,
      1,
      999,
      1_000,
      86_399_999,
      Date.UTC(2026, 10, 29, 18, 19, 1, 5),
      Date.UTC(9999, 11, 31, 23, 59, 59, 999),
    ];
    for (let t = Date.UTC(2024, 1, 28); t < Date.UTC(2024, 2, 2); t += 3_600_007) times.push(t);
    for (const t of times) expect(isoTime(new Date(t))).toBe(new Date(t).toISOString());
  });

  it('falls back to toISOString outside four-digit years, and throws as it does for an invalid date', () => {
    for (const t of [Date.UTC(10000, 0, 1), Date.UTC(-1, 0, 1), -8.64e15])
      expect(isoTime(new Date(t))).toBe(new Date(t).toISOString());
    expect(() => isoTime(new Date(NaN))).toThrow(RangeError);
  });
});
