import { mkdirSync, openSync, closeSync, writeFileSync } from 'node:fs';
import { audit } from '../audit/audit.js';
import type { Config } from '../config/schema.js';
import { errorMessage, isErrno } from '../errors.js';
import { isTerminal } from '../fleet/record-status.js';
import { readRecord } from '../fleet/registry.js';
import type { Layout } from '../layout/layout.js';
import { spawnAgent } from '../spawn/spawn.js';
import type { Schedule, ScheduleState } from './store.js';

/**
 * Firing one slot of a schedule (§5.10). A slot fires at most once, whatever crashes or
 * however many schedulers run: its marker is created with O_EXCL before anything starts, so
 * of all the processes that reach a slot exactly one goes on. A scheduler killed between the
 * marker and the spawn loses that run (audited as `schedule_missed` by the next one) rather
 * than risk two.
 */

/** What starting a claimed slot's run came to (queueing and overlap are decided before, in scheduler.ts). */
export type FireOutcome = { kind: 'started'; id: string; runId: string } | { kind: 'skipped'; reason: string };

/** The slot's marker name: its epoch milliseconds, so markers sort and compare as times. */
function markerPath(layout: Layout, schedule: Schedule, slot: Date): string {
  return `${layout.scheduleFired(schedule.name)}/${slot.getTime()}`;
}

/** Claims `slot` for this process; false when another already did. */
export function claimSlot(layout: Layout, schedule: Schedule, slot: Date): boolean {
  mkdirSync(layout.scheduleFired(schedule.name), { recursive: true });
  try {
    closeSync(openSync(markerPath(layout, schedule, slot), 'wx'));
    return true;
  } catch (err) {
    if (isErrno(err, 'EEXIST')) return false;
    throw err;
  }
}

export function runIdFor(slot: Date): string {
  return `r${slot
    .toISOString()
    .replace(/[-:]/g, '')
    .replace(/\.\d+Z$/, 'Z')}`;
}

/** The previous run still going (any live status), or null. */
export function liveRun(layout: Layout, state: ScheduleState): string | null {
  if (!state.lastRun) return null;
  const rec = readRecord(layout, state.lastRun.id);
  return rec && !isTerminal(rec.status) ? rec.id : null;
}

/** Why today's budget refuses a run, or null. */
export function budgetRefusal(schedule: Schedule, state: ScheduleState, today: string): string | null {
  if (state.day !== today) return null;
  if (schedule.maxCostPerDay !== null && state.costUsd >= schedule.maxCostPerDay)
    return `today's runs cost $${state.costUsd.toFixed(4)}, at its max_cost_per_day of $${schedule.maxCostPerDay}`;
  if (schedule.maxTokensPerDay !== null && state.tokens >= schedule.maxTokensPerDay)
    return `today's runs used ${state.tokens} tokens, at its max_tokens_per_day of ${schedule.maxTokensPerDay}`;
  return null;
}

export interface StartRunOptions {
  env?: NodeJS.ProcessEnv;
  /** Wait for a running slot rather than be refused (overlap queue / allow). */
  waitForSlot: boolean;
  /** A person's `schedule run-now`: not tied to a cron slot. */
  manual?: boolean;
}

/** Starts the run of `slot` (already claimed): a root agent, `spawnedBy: cron`. */
export async function startRun(
  layout: Layout,
  config: Config,
  schedule: Schedule,
  slot: Date,
  opts: StartRunOptions,
): Promise<FireOutcome> {
  const runId = runIdFor(slot) + (opts.manual ? '-now' : '');
  try {
    const rec = await spawnAgent(
      layout,
      config,
      {
        agent: schedule.agent ?? undefined,
        prompt: schedule.task,
        mode: schedule.background ? 'headless' : 'oneshot',
        model: schedule.model ?? undefined,
        schedule: { name: schedule.name, runId, slot: slot.toISOString(), notify: schedule.notify },
        ...(schedule.timeoutSecs !== null ? { timeoutSecs: schedule.timeoutSecs } : {}),
        ...(opts.waitForSlot ? { queue: {} } : {}),
      },
      { parent: null, background: schedule.background, ...(opts.env ? { env: opts.env } : {}) },
    );
    if (!opts.manual) writeFileSync(markerPath(layout, schedule, slot), `${rec.id}\n`);
    audit(layout, {
      event: 'schedule_fired',
      agent: rec.id,
      schedule: schedule.name,
      run_id: runId,
      slot: slot.toISOString(),
      spawn_site: 'cron',
      ...(opts.manual ? { manual: true } : {}),
    });
    return { kind: 'started', id: rec.id, runId };
  } catch (err) {
    const reason = errorMessage(err).split('\n')[0]!;
    if (!opts.manual) writeFileSync(markerPath(layout, schedule, slot), `skipped: ${reason}\n`);
    audit(layout, {
      event: 'schedule_skipped',
      schedule: schedule.name,
      run_id: runId,
      slot: slot.toISOString(),
      reason,
    });
    return { kind: 'skipped', reason };
  }
}
