import { Cron } from 'croner';
import { UsageError } from '../errors.js';

/**
 * Cron expressions, time zones and DST through croner (docs/decisions.md): five fields, or
 * six with seconds first. A fixed-time slot in a DST gap fires once at the first valid time
 * after the gap, and a time that occurs twice fires once (croner's documented rule).
 */

const FIELDS_5 = ['minute', 'hour', 'day of month', 'month', 'day of week'];
const FIELDS_6 = ['second', ...FIELDS_5];

export interface CronSpec {
  expr: string;
  /** An IANA zone (`Europe/Berlin`); null: the machine's. */
  timezone: string | null;
}

/** A checked cron expression; throws a one-line UsageError naming the field and its position. */
export function parseCron(spec: CronSpec): Cron {
  const fields = spec.expr.trim().split(/\s+/);
  if (fields.length !== 5 && fields.length !== 6) {
    throw new UsageError(
      `cron expression '${spec.expr}' has ${fields.length} fields; give 5 (minute hour day month weekday) or 6 (seconds first), e.g. "0 9 * * 1-5"`,
      { code: 'bad-cron' },
    );
  }
  if (spec.timezone !== null && !validZone(spec.timezone)) {
    throw new UsageError(`time zone '${spec.timezone}' is not known; give an IANA name such as Europe/Berlin or UTC`, {
      code: 'bad-timezone',
    });
  }
  try {
    return new Cron(spec.expr, {
      paused: true,
      mode: '5-or-6-parts',
      ...(spec.timezone ? { timezone: spec.timezone } : {}),
    });
  } catch (err) {
    throw new UsageError(cronErrorMessage(spec.expr, fields, (err as Error).message), { code: 'bad-cron', cause: err });
  }
}

/** "field 2 (hour, column 3) '25' is not valid in '0 25 * * *'" from croner's message. */
function cronErrorMessage(expr: string, fields: string[], message: string): string {
  const names = fields.length === 6 ? FIELDS_6 : FIELDS_5;
  const said = /for (day of month|day of week|day-of-month|day-of-week|second|minute|hour|month|weekday|day)\b/i
    .exec(message)?.[1]
    ?.toLowerCase()
    .replace(/-/g, ' ');
  let index = said ? names.indexOf(said === 'weekday' ? 'day of week' : said === 'day' ? 'day of month' : said) : -1;
  if (index < 0) index = names.findIndex((_, i) => !fieldAlone(fields, i));
  if (index < 0) return `cron expression '${expr}' is not valid (${message}); e.g. "0 9 * * 1-5"`;
  const column = columnOf(expr, index);
  return `cron expression '${expr}': field ${index + 1} (${names[index]}, column ${column}) '${fields[index]}' is not valid; e.g. "0 9 * * 1-5"`;
}

/** True when field `i` is valid with every other field a wildcard. */
function fieldAlone(fields: string[], i: number): boolean {
  const probe = fields.map((f, j) => (j === i ? f : '*')).join(' ');
  try {
    new Cron(probe, { paused: true, mode: '5-or-6-parts' });
    return true;
  } catch {
    return false;
  }
}

function columnOf(expr: string, index: number): number {
  const re = /\S+/g;
  let m: RegExpExecArray | null;
  for (let i = 0; (m = re.exec(expr)); i++) if (i === index) return m.index + 1;
  return 1;
}

function validZone(zone: string): boolean {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: zone });
    return true;
  } catch {
    return false;
  }
}

/** The next `n` fire times after `from`. */
export function nextFires(cron: Cron, n: number, from: Date = new Date()): Date[] {
  return cron.nextRuns(n, from);
}

/** Slot times in (`after`, `upTo`], oldest first, at most `limit` (the newest kept when cut). */
export function slotsBetween(cron: Cron, after: Date, upTo: Date, limit = 1000): Date[] {
  const out: Date[] = [];
  let at: Date | null = after;
  while ((at = cron.nextRun(at)) && at.getTime() <= upTo.getTime()) {
    out.push(at);
    if (out.length > limit) out.shift();
  }
  return out;
}
