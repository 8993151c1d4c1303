import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { z } from 'zod';
import { FlotillaError, isErrno, UsageError } from '../errors.js';
import type { Layout } from '../layout/layout.js';
import { writeFileAtomic } from '../layout/atomic.js';

/**
 * Schedules as data (§5.10): one JSON file per schedule under `state/schedules/`, written
 * whole (write, fsync, rename), and beside it what the scheduler remembers of it. The
 * scheduler rereads the files on every tick, so `add`, `pause` and `rm` take effect without
 * a restart.
 */

export const OVERLAP = ['skip', 'queue', 'allow'] as const;
export const CATCH_UP = ['none', 'once'] as const;

export const scheduleSchema = z.object({
  version: z.literal(1).default(1),
  name: z.string().regex(/^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$/),
  cron: z.string().min(1),
  timezone: z.string().nullable().default(null),
  /** The definition each run starts (default: the fleet's default agent). */
  agent: z.string().nullable().default(null),
  /** A model for the runs (`--model`), else the definition's. */
  model: z.string().nullable().default(null),
  task: z.string().min(1),
  overlap: z.enum(OVERLAP).default('skip'),
  catchUp: z.enum(CATCH_UP).default('once'),
  /** Wall-clock limit of each run, seconds; null: the definition's. */
  timeoutSecs: z.number().positive().nullable().default(null),
  /** Runs stop being started once today's runs of this schedule cost this much (USD). */
  maxCostPerDay: z.number().nonnegative().nullable().default(null),
  /** Or used this many tokens (input + output). */
  maxTokensPerDay: z.number().int().nonnegative().nullable().default(null),
  /** Runs open headless (no tmux window), as `spawn-agent --background`. */
  background: z.boolean().default(false),
  /** Who gets each run's completion: an agent id; null, or that agent gone, for the person. */
  notify: z.string().nullable().default(null),
  createdAt: z.string(),
});
export type ScheduleInput = z.input<typeof scheduleSchema>;
/**
 * A schedule as the scheduler and the CLI see it: the stored fields, whether it is paused (a
 * marker file beside it, so a definition's schedule pauses the same way), and the definition
 * file it comes from (null: added with `flotilla schedule add`).
 */
export type Schedule = z.infer<typeof scheduleSchema> & { paused: boolean; definedIn: string | null };

export const scheduleStateSchema = z.object({
  /** Every slot at or before this time has been dealt with (fired, skipped or missed). */
  cursor: z.string().nullable().default(null),
  lastRun: z.object({ id: z.string(), runId: z.string(), slot: z.string() }).nullable().default(null),
  /** Slots fired under `overlap: queue` whose run waits for the one before to end. */
  queued: z.array(z.string()).default([]),
  /** Today's spend of this schedule's runs, for `maxCostPerDay` / `maxTokensPerDay`. */
  day: z.string().nullable().default(null),
  costUsd: z.number().default(0),
  tokens: z.number().default(0),
  /** Runs already counted into today's spend. */
  counted: z.array(z.string()).default([]),
  lastResult: z.object({ id: z.string(), status: z.string(), at: z.string() }).nullable().default(null),
});
export type ScheduleState = z.infer<typeof scheduleStateSchema>;

export function readSchedule(layout: Layout, name: string): Schedule | null {
  let text: string;
  try {
    text = readFileSync(layout.schedule(name), 'utf8');
  } catch (err) {
    if (isErrno(err, 'ENOENT')) return null;
    throw err;
  }
  const parsed = scheduleSchema.safeParse(JSON.parse(text));
  if (!parsed.success)
    throw new FlotillaError(
      `schedule file ${layout.schedule(name)} is damaged (${parsed.error.issues[0]?.message}); remove it with 'flotilla schedule rm ${name}' and add it again`,
      { code: 'bad-schedule' },
    );
  return { ...parsed.data, paused: isPaused(layout, name), definedIn: null };
}

export function isPaused(layout: Layout, name: string): boolean {
  return existsSync(layout.schedulePaused(name));
}

export function setPaused(layout: Layout, name: string, paused: boolean): void {
  mkdirSync(layout.schedulesDir, { recursive: true });
  if (paused) writeFileAtomic(layout.schedulePaused(name), `${new Date().toISOString()}\n`);
  else rmSync(layout.schedulePaused(name), { force: true });
}

/** Every schedule, by name; a damaged file is reported, never fatal to the others. */
export function listSchedules(layout: Layout): { schedules: Schedule[]; errors: string[] } {
  let names: string[];
  try {
    names = readdirSync(layout.schedulesDir)
      .filter((f) => f.endsWith('.json') && !f.endsWith('.state.json'))
      .map((f) => f.slice(0, -5))
      .sort();
  } catch (err) {
    if (isErrno(err, 'ENOENT')) return { schedules: [], errors: [] };
    throw err;
  }
  const schedules: Schedule[] = [];
  const errors: string[] = [];
  for (const name of names) {
    try {
      const s = readSchedule(layout, name);
      if (s) schedules.push(s);
    } catch (err) {
      errors.push((err as Error).message);
    }
  }
  return { schedules, errors };
}

export function writeSchedule(layout: Layout, schedule: ScheduleInput): Schedule {
  // Only the stored fields: `paused` and `definedIn` are not the file's to hold.
  const {
    paused: _p,
    definedIn: _d,
    ...fields
  } = schedule as ScheduleInput & Partial<Pick<Schedule, 'paused' | 'definedIn'>>;
  const parsed = scheduleSchema.safeParse(fields);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    throw new UsageError(`schedule ${issue.path.join('.') || 'field'}: ${issue.message}`, { code: 'bad-schedule' });
  }
  mkdirSync(layout.schedulesDir, { recursive: true });
  writeFileAtomic(layout.schedule(parsed.data.name), `${JSON.stringify(parsed.data, null, 2)}\n`);
  return { ...parsed.data, paused: isPaused(layout, parsed.data.name), definedIn: null };
}

export function removeSchedule(layout: Layout, name: string): boolean {
  if (!readSchedule(layout, name)) return false;
  rmSync(layout.schedule(name), { force: true });
  rmSync(layout.scheduleState(name), { force: true });
  rmSync(layout.schedulePaused(name), { force: true });
  rmSync(layout.scheduleFired(name), { recursive: true, force: true });
  return true;
}

export function readScheduleState(layout: Layout, name: string): ScheduleState {
  try {
    return scheduleStateSchema.parse(JSON.parse(readFileSync(layout.scheduleState(name), 'utf8')));
  } catch {
    // Missing or damaged: start afresh; the fired-slot markers still keep every slot to one run.
    return scheduleStateSchema.parse({});
  }
}

export function writeScheduleState(layout: Layout, name: string, state: ScheduleState): void {
  mkdirSync(layout.schedulesDir, { recursive: true });
  writeFileAtomic(layout.scheduleState(name), `${JSON.stringify(state)}\n`);
}
