import { existsSync } from 'node:fs';
import type { Cron } from 'croner';
import { audit } from '../audit/audit.js';
import type { Config } from '../config/schema.js';
import type { Definition } from '../definitions/types.js';
import { errorMessage } from '../errors.js';
import { selfProcess } from '../fleet/proc.js';
import { isTerminal } from '../fleet/record-status.js';
import { readRecord } from '../fleet/registry.js';
import type { Layout } from '../layout/layout.js';
import { sleep } from '../sleep.js';
import { nextFires, parseCron, slotsBetween } from './cron.js';
import { budgetRefusal, claimSlot, liveRun, startRun } from './fire.js';
import { acquireSchedulerLock } from './lock.js';
import { allSchedules } from './sources.js';
import { writeScheduleView, type ScheduleView } from './view.js';
import { readScheduleState, writeScheduleState, type Schedule, type ScheduleState } from './store.js';

/**
 * The fleet's scheduler (§5.10): one per fleet root, in the `schedule` window of `flotilla up`
 * or alone as `flotilla scheduler`. Each tick it rereads the schedules and fires every slot
 * that came due since the last. Slots that passed while no scheduler ran (before this one
 * took the lock) are "missed": `catch_up: once` fires the latest of them once, `none` skips
 * them; both are audited.
 */

export interface SchedulerOptions {
  signal: AbortSignal;
  /** The effective config, reread each tick (cached by its files). */
  config: () => Promise<Config>;
  /** The fleet's definitions as they are now (their `schedule:` blocks fire too). */
  definitions?: () => readonly Definition[];
  env?: NodeJS.ProcessEnv;
  log: (line: string) => void;
  tickMs?: number;
}

interface Tracked {
  state: ScheduleState;
  cron: Cron;
  key: string;
  /** A run being started (its spawn in flight): counts as running for `overlap`. */
  starting: boolean;
}

export async function runScheduler(layout: Layout, opts: SchedulerOptions): Promise<void> {
  const lock = await acquireSchedulerLock(layout, {
    signal: opts.signal,
    onWait: (h) =>
      opts.log(
        h
          ? `another scheduler (pid ${h.pid} on ${h.host}, since ${h.since}) holds ${layout.root}; waiting for it to stop`
          : `another scheduler holds ${layout.root}; waiting for it to stop`,
      ),
  });
  if (!lock) return;
  const startedAt = new Date();
  audit(layout, { event: 'scheduler_start', agent: 'human', root: layout.root });
  opts.log(`scheduler: watching the schedules of ${layout.root}`);
  const tracked = new Map<string, Tracked>();
  const inflight = new Set<Promise<void>>();
  let lastErrors = '';
  let lastView = '';
  try {
    while (!opts.signal.aborted) {
      const config = await opts.config();
      const { schedules, errors } = allSchedules(layout, opts.definitions?.() ?? []);
      if (errors.join('\n') !== lastErrors) errors.forEach((e) => opts.log(`scheduler: ${e}`));
      lastErrors = errors.join('\n');
      for (const name of tracked.keys()) if (!schedules.some((s) => s.name === name)) tracked.delete(name);
      for (const s of schedules) {
        try {
          tick(layout, config, s, tracked, startedAt, inflight, opts);
        } catch (err) {
          opts.log(`scheduler: ${s.name}: ${errorMessage(err)}`);
        }
      }
      const view = viewOf(schedules, tracked, errors);
      const text = JSON.stringify(view);
      if (text !== lastView) {
        writeScheduleView(layout, { pid: selfProcess().pid, start: selfProcess().start, ...view });
        lastView = text;
      }
      await sleep(opts.tickMs ?? 250, opts.signal);
    }
  } finally {
    // Readers tell a stopped scheduler by pid 0; one killed outright by its pid being gone.
    if (lastView) writeScheduleView(layout, { pid: 0, ...(JSON.parse(lastView) as Omit<ScheduleView, 'pid'>) });
    lock.release();
    audit(layout, { event: 'scheduler_stop', agent: 'human', root: layout.root });
  }
}

function viewOf(schedules: Schedule[], tracked: Map<string, Tracked>, errors: string[]): Omit<ScheduleView, 'pid'> {
  return {
    schedules: schedules.map((s) => {
      const t = tracked.get(s.name);
      return {
        name: s.name,
        cron: s.cron,
        timezone: s.timezone,
        agent: s.agent,
        paused: s.paused,
        definedIn: s.definedIn,
        next: s.paused || !t ? null : (nextFires(t.cron, 1)[0]?.toISOString() ?? null),
        lastResult: t?.state.lastResult ?? null,
      };
    }),
    errors,
  };
}

function track(layout: Layout, s: Schedule, tracked: Map<string, Tracked>): Tracked {
  const key = `${s.cron}\u0000${s.timezone ?? ''}`;
  let t = tracked.get(s.name);
  if (!t || t.key !== key) {
    t = {
      state: t?.state ?? readScheduleState(layout, s.name),
      cron: parseCron({ expr: s.cron, timezone: s.timezone }),
      key,
      starting: t?.starting ?? false,
    };
    tracked.set(s.name, t);
  }
  return t;
}

function tick(
  layout: Layout,
  config: Config,
  s: Schedule,
  tracked: Map<string, Tracked>,
  startedAt: Date,
  inflight: Set<Promise<void>>,
  opts: SchedulerOptions,
): void {
  const t = track(layout, s, tracked);
  const now = new Date();
  const save = (): void => writeScheduleState(layout, s.name, t.state);
  settleLastRun(layout, s, t);
  if (s.paused) {
    // Slots that pass while paused are not owed afterwards.
    t.state.cursor = now.toISOString();
    save();
    return;
  }
  const cursor = new Date(t.state.cursor ?? s.createdAt);
  const slots = slotsBetween(t.cron, cursor, now);
  const missed = slots.filter((d) => d < startedAt && !existsSync(`${layout.scheduleFired(s.name)}/${d.getTime()}`));
  const due = slots.filter((d) => d >= startedAt);
  if (missed.length > 0) {
    const fired = s.catchUp === 'once' ? missed.at(-1)! : null;
    const skipped = fired ? missed.slice(0, -1) : missed;
    if (skipped.length > 0)
      audit(layout, {
        event: 'schedule_missed',
        schedule: s.name,
        count: skipped.length,
        first: skipped[0]!.toISOString(),
        last: skipped.at(-1)!.toISOString(),
        catch_up: s.catchUp,
      });
    if (fired) fire(layout, config, s, t, fired, inflight, opts, true);
  }
  for (const slot of due) fire(layout, config, s, t, slot, inflight, opts, false);
  if (slots.length > 0) t.state.cursor = slots.at(-1)!.toISOString();
  // A queued slot starts once the run before it has ended.
  if (t.state.queued.length > 0 && !t.starting && !liveRun(layout, t.state)) {
    const next = new Date(t.state.queued.shift()!);
    begin(layout, config, s, t, next, inflight, opts);
  }
  save();
}

function fire(
  layout: Layout,
  config: Config,
  s: Schedule,
  t: Tracked,
  slot: Date,
  inflight: Set<Promise<void>>,
  opts: SchedulerOptions,
  catchUp: boolean,
): void {
  if (!claimSlot(layout, s, slot)) return;
  const today = slot.toISOString().slice(0, 10);
  const broke = budgetRefusal(s, t.state, today);
  if (broke) {
    audit(layout, {
      event: 'schedule_skipped',
      schedule: s.name,
      slot: slot.toISOString(),
      reason: `budget: ${broke}`,
    });
    opts.log(`${s.name}: slot ${slot.toISOString()} skipped — ${broke}`);
    return;
  }
  const running = t.starting ? '(starting)' : liveRun(layout, t.state);
  if (running && s.overlap !== 'allow') {
    if (s.overlap === 'queue') {
      t.state.queued.push(slot.toISOString());
      audit(layout, { event: 'schedule_queued', schedule: s.name, slot: slot.toISOString(), behind: running });
      opts.log(`${s.name}: slot ${slot.toISOString()} queued behind ${running}`);
    } else {
      audit(layout, {
        event: 'schedule_skipped',
        schedule: s.name,
        slot: slot.toISOString(),
        reason: `overlap: the last run ${running} has not ended`,
      });
      opts.log(`${s.name}: slot ${slot.toISOString()} skipped — the last run ${running} has not ended (overlap: skip)`);
    }
    return;
  }
  if (catchUp) opts.log(`${s.name}: catching up the slot of ${slot.toISOString()}, missed while no scheduler ran`);
  begin(layout, config, s, t, slot, inflight, opts);
}

function begin(
  layout: Layout,
  config: Config,
  s: Schedule,
  t: Tracked,
  slot: Date,
  inflight: Set<Promise<void>>,
  opts: SchedulerOptions,
): void {
  t.starting = true;
  const p = startRun(layout, config, s, slot, {
    waitForSlot: s.overlap !== 'skip',
    ...(opts.env ? { env: opts.env } : {}),
  })
    .then((out) => {
      if (out.kind === 'started') {
        t.state.lastRun = { id: out.id, runId: out.runId, slot: slot.toISOString() };
        opts.log(`${s.name}: started ${out.id} (run ${out.runId})`);
      } else if (out.kind === 'skipped') {
        opts.log(`${s.name}: slot ${slot.toISOString()} skipped — ${out.reason}`);
      }
    })
    .catch((err: unknown) => opts.log(`${s.name}: ${errorMessage(err)}`))
    .finally(() => {
      t.starting = false;
      writeScheduleState(layout, s.name, t.state);
      inflight.delete(p);
    });
  inflight.add(p);
}

/** Counts a finished run's usage into today's spend, once, and keeps its result. */
function settleLastRun(layout: Layout, s: Schedule, t: Tracked): void {
  const last = t.state.lastRun;
  if (!last || t.state.counted.includes(last.id)) return;
  const rec = readRecord(layout, last.id);
  if (!rec || !isTerminal(rec.status)) return;
  const today = new Date().toISOString().slice(0, 10);
  if (t.state.day !== today) Object.assign(t.state, { day: today, costUsd: 0, tokens: 0, counted: [] });
  t.state.costUsd += rec.usage.costUsd ?? 0;
  t.state.tokens += rec.usage.inputTokens + rec.usage.outputTokens;
  t.state.counted = [...t.state.counted.slice(-50), last.id];
  t.state.lastResult = { id: rec.id, status: rec.status, at: rec.finishedAt ?? new Date().toISOString() };
  audit(layout, {
    event: 'schedule_run_ended',
    agent: rec.id,
    schedule: s.name,
    run_id: last.runId,
    status: rec.status,
  });
}
