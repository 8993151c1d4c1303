import { describe, expect, it } from 'vitest';
import { nextFires, parseCron, slotsBetween } from '../../src/schedule/cron.js';

describe('cron expressions (croner)', () => {
  it.each([
    ['61 * * * *', "field 1 (minute, column 1) '61'"],
    ['0 25 * * *', "field 2 (hour, column 3) '25'"],
    ['0 0 32 * *', "field 3 (day of month, column 5) '32'"],
    ['*/2 * * 13 *', "field 4 (month, column 9) '13'"],
    ['0 9 * * 8', "field 5 (day of week, column 9) '8'"],
    ['*/5 x * * * *', "field 2 (minute, column 5) 'x'"],
  ])('refuses %s, naming the field and its column', (expr, where) => {
    expect(() => parseCron({ expr, timezone: null })).toThrow(where);
  });

  it('refuses a wrong number of fields and an unknown time zone, saying what to give', () => {
    expect(() => parseCron({ expr: '* * * *', timezone: null })).toThrow(
      /has 4 fields; give 5 .* or 6 \(seconds first\)/,
    );
    expect(() => parseCron({ expr: '0 9 * * *', timezone: 'Mars/Olympus' })).toThrow(
      /time zone 'Mars\/Olympus' is not known/,
    );
  });

  it('reads an optional seconds field and a time zone', () => {
    const from = new Date('2026-01-05T07:59:59Z');
    expect(
      nextFires(parseCron({ expr: '*/20 * * * * *', timezone: 'UTC' }), 3, from).map((d) => d.toISOString()),
    ).toEqual(['2026-01-05T08:00:00.000Z', '2026-01-05T08:00:20.000Z', '2026-01-05T08:00:40.000Z']);
    // 09:00 on weekdays in Berlin (UTC+1 in January): Monday 5th, Tuesday 6th, Wednesday 7th.
    expect(
      nextFires(parseCron({ expr: '0 9 * * 1-5', timezone: 'Europe/Berlin' }), 3, from).map((d) => d.toISOString()),
    ).toEqual(['2026-01-05T08:00:00.000Z', '2026-01-06T08:00:00.000Z', '2026-01-07T08:00:00.000Z']);
  });

  it('fires a daily 02:30 once on each DST night: once after the spring gap, once in the autumn repeat', () => {
    const cron = parseCron({ expr: '30 2 * * *', timezone: 'Europe/Berlin' });
    // 29 March 2026: 02:00 → 03:00 local. The 02:30 that does not exist fires once, at 03:00 CEST.
    const spring = slotsBetween(cron, new Date('2026-03-28T12:00:00Z'), new Date('2026-03-29T12:00:00Z'));
    expect(spring.map((d) => d.toISOString())).toEqual(['2026-03-29T01:00:00.000Z']);
    // 25 October 2026: 03:00 → 02:00 local, so 02:30 happens twice; it fires once, the first time.
    const autumn = slotsBetween(cron, new Date('2026-10-24T12:00:00Z'), new Date('2026-10-25T12:00:00Z'));
    expect(autumn.map((d) => d.toISOString())).toEqual(['2026-10-25T00:30:00.000Z']);
  });

  it('lists the slots in a span, oldest first, and keeps the newest when there are too many', () => {
    const cron = parseCron({ expr: '*/2 * * * * *', timezone: 'UTC' });
    const t0 = new Date('2026-01-01T00:00:00Z');
    expect(slotsBetween(cron, t0, new Date('2026-01-01T00:00:07Z')).map((d) => d.getUTCSeconds())).toEqual([2, 4, 6]);
    expect(slotsBetween(cron, t0, new Date('2026-01-01T00:01:00Z'), 3).map((d) => d.getUTCSeconds())).toEqual([
      56, 58, 0,
    ]);
  });
});
