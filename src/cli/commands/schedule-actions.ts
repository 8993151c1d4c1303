import type { Command } from 'commander';
import { audit } from '../../audit/audit.js';
import { FlotillaError, UsageError } from '../../errors.js';
import { listRecords } from '../../fleet/registry.js';
import { nextFires, parseCron } from '../../schedule/cron.js';
import { startRun } from '../../schedule/fire.js';
import { schedulerRunning } from '../../schedule/lock.js';
import { allSchedules } from '../../schedule/sources.js';
import { readScheduleState, removeSchedule, setPaused, writeSchedule, type Schedule } from '../../schedule/store.js';
import { cliConfig, cliContext } from '../context.js';
import { printJson } from '../output.js';

/** The actions of `flotilla schedule …` (schedule.ts declares them). */

export interface AddOptions {
  agent?: string;
  model?: string;
  tz?: string;
  overlap: 'skip' | 'queue' | 'allow';
  catchUp: 'none' | 'once';
  timeout?: string;
  maxCostPerDay?: string;
  maxTokensPerDay?: string;
  background?: boolean;
  notify?: string;
  json?: boolean;
}

function positive(flag: string, value: string | undefined, integer = false): number | null {
  if (value === undefined) return null;
  const n = Number(value);
  if (!(n > 0) || (integer && !Number.isInteger(n)))
    throw new UsageError(`${flag} must be a ${integer ? 'whole ' : ''}number above 0, got '${value}'`);
  return n;
}

type CliLayout = ReturnType<typeof cliContext>['layout'];

/** Every schedule, the definitions' `schedule:` blocks included. */
async function schedulesOf(layout: CliLayout): Promise<ReturnType<typeof allSchedules>> {
  const { config } = await cliConfig(layout);
  const { loadDefinitions } = await import('../../definitions/load.js');
  const loaded = await loadDefinitions({ layout, config });
  const found = allSchedules(layout, loaded.definitions);
  const dropped = loaded.trust.ignored.filter((i) => i.startsWith('schedule of '));
  if (dropped.length)
    found.errors.push(
      `not trusted, so never fired: ${dropped.join(', ')} — run 'flotilla trust' in this folder to let them run`,
    );
  return found;
}

const when = (d: Date | undefined): string => (d ? d.toISOString().replace('.000Z', 'Z') : '—');

export async function addSchedule(
  sub: Command,
  name: string,
  cron: string,
  task: string[],
  opts: AddOptions,
): Promise<void> {
  const { layout } = cliContext(sub);
  const timezone = opts.tz ?? null;
  const parsed = parseCron({ expr: cron, timezone });
  if ((await schedulesOf(layout)).schedules.some((x) => x.name === name))
    throw new FlotillaError(
      `schedule '${name}' already exists — remove it first (flotilla schedule rm ${name}) or pick another name`,
      { code: 'schedule-exists' },
    );
  if (opts.agent) {
    const { config } = await cliConfig(layout);
    const { loadDefinitions, pickDefinition } = await import('../../definitions/load.js');
    try {
      pickDefinition(await loadDefinitions({ layout, config }), opts.agent);
    } catch (err) {
      throw new UsageError(`--agent: ${(err as Error).message}`);
    }
  }
  const s = writeSchedule(layout, {
    name,
    cron,
    timezone,
    agent: opts.agent ?? null,
    model: opts.model ?? null,
    task: task.join(' '),
    overlap: opts.overlap,
    catchUp: opts.catchUp,
    timeoutSecs: positive('--timeout', opts.timeout),
    maxCostPerDay: positive('--max-cost-per-day', opts.maxCostPerDay),
    maxTokensPerDay: positive('--max-tokens-per-day', opts.maxTokensPerDay, true),
    background: opts.background ?? false,
    notify: opts.notify ?? null,
    createdAt: new Date().toISOString(),
  });
  audit(layout, { event: 'schedule_added', agent: 'human', schedule: name, cron, timezone });
  const next = nextFires(parsed, 3);
  if (opts.json) return printJson({ schedule: s, next: next.map((d) => d.toISOString()) });
  process.stdout.write(
    `added schedule '${name}' (${cron}${timezone ? ` ${timezone}` : ''}); next: ${next.map(when).join(', ')}\n`,
  );
  if (!(await schedulerRunning(layout)))
    process.stdout.write(
      "no scheduler runs for this fleet yet: 'flotilla up' starts one, or run 'flotilla scheduler'\n",
    );
}

function view(layout: CliLayout, s: Schedule): Record<string, unknown> {
  const state = readScheduleState(layout, s.name);
  let next: string | null = null;
  try {
    next = s.paused
      ? null
      : (nextFires(parseCron({ expr: s.cron, timezone: s.timezone }), 1)[0]?.toISOString() ?? null);
  } catch {
    /* shown as no next fire */
  }
  return {
    ...s,
    next,
    lastRun: state.lastRun,
    lastResult: state.lastResult,
    queued: state.queued,
    today: { day: state.day, costUsd: state.costUsd, tokens: state.tokens },
  };
}

export async function listSchedulesCmd(sub: Command, opts: { json?: boolean }): Promise<void> {
  const { layout } = cliContext(sub);
  const { schedules, errors } = await schedulesOf(layout);
  const running = await schedulerRunning(layout);
  for (const e of errors) process.stderr.write(`flotilla: warning: ${e}\n`);
  if (opts.json)
    return printJson({ scheduler: running ? 'running' : 'stopped', schedules: schedules.map((s) => view(layout, s)) });
  if (schedules.length === 0) {
    process.stdout.write('no schedules — add one: flotilla schedule add NAME "0 9 * * 1-5" --agent DEF "task"\n');
    return;
  }
  process.stdout.write(`scheduler: ${running ? 'running' : "not running ('flotilla up' or 'flotilla scheduler')"}\n`);
  for (const s of schedules) {
    const v = view(layout, s) as { next: string | null; lastResult: { id: string; status: string } | null };
    const last = v.lastResult ? `${v.lastResult.status} (${v.lastResult.id})` : 'no run yet';
    const from = s.definedIn ? `  (from ${s.definedIn})` : '';
    process.stdout.write(
      `${s.name}  ${s.cron}${s.timezone ? ` ${s.timezone}` : ''}  ${s.agent ?? '(default agent)'}  ${s.paused ? 'paused' : `next ${v.next ?? '—'}`}  last: ${last}${from}\n`,
    );
  }
}

async function mustRead(layout: CliLayout, name: string): Promise<Schedule> {
  const all = (await schedulesOf(layout)).schedules;
  const s = all.find((x) => x.name === name);
  if (!s) {
    const names = all.map((x) => x.name);
    throw new FlotillaError(
      `no schedule named '${name}'${names.length ? ` — schedules: ${names.join(', ')}` : ' — there are none; add one with flotilla schedule add'}`,
      { code: 'unknown-schedule' },
    );
  }
  return s;
}

export async function showSchedule(sub: Command, name: string, opts: { json?: boolean }): Promise<void> {
  const { layout } = cliContext(sub);
  const s = await mustRead(layout, name);
  const runs = listRecords(layout)
    .filter((r) => r.schedule?.name === name)
    .map((r) => ({ id: r.id, runId: r.schedule!.runId, slot: r.schedule!.slot, status: r.status }));
  const next = s.paused
    ? []
    : nextFires(parseCron({ expr: s.cron, timezone: s.timezone }), 3).map((d) => d.toISOString());
  if (opts.json) return printJson({ ...view(layout, s), nextFires: next, runs });
  const lines = [
    `${s.name}: ${s.cron}${s.timezone ? ` (${s.timezone})` : ''}${s.paused ? ' — paused' : ''}`,
    ...(s.definedIn ? [`  from ${s.definedIn}`] : []),
    `  agent ${s.agent ?? '(default)'}${s.model ? `, model ${s.model}` : ''}${s.notify ? `; completions to ${s.notify}` : ''}; overlap ${s.overlap}; catch-up ${s.catchUp}${s.timeoutSecs ? `; timeout ${s.timeoutSecs}s` : ''}${s.background ? '; headless' : ''}`,
    `  task: ${s.task}`,
    `  next: ${next.length ? next.join(', ') : '—'}`,
    ...runs.slice(-10).map((r) => `  run ${r.runId} ${r.id} ${r.status}`),
  ];
  process.stdout.write(`${lines.join('\n')}\n`);
}

export async function removeScheduleCmd(sub: Command, name: string): Promise<void> {
  const { layout } = cliContext(sub);
  const s = await mustRead(layout, name);
  if (s.definedIn)
    throw new FlotillaError(
      `schedule '${name}' comes from ${s.definedIn} — remove its schedule: block there (or pause it: flotilla schedule pause ${name})`,
      { code: 'schedule-in-definition' },
    );
  removeSchedule(layout, name);
  audit(layout, { event: 'schedule_removed', agent: 'human', schedule: name });
  process.stdout.write(`removed schedule '${name}'\n`);
}

async function pauseOrResume(sub: Command, name: string, paused: boolean): Promise<void> {
  const { layout } = cliContext(sub);
  await mustRead(layout, name);
  setPaused(layout, name, paused);
  audit(layout, { event: 'schedule_changed', agent: 'human', schedule: name, paused });
  process.stdout.write(`${paused ? 'paused' : 'resumed'} schedule '${name}'\n`);
}

export const pauseSchedule = (sub: Command, name: string): Promise<void> => pauseOrResume(sub, name, true);
export const resumeSchedule = (sub: Command, name: string): Promise<void> => pauseOrResume(sub, name, false);

export async function runNow(sub: Command, name: string, opts: { json?: boolean }): Promise<void> {
  const { layout } = cliContext(sub);
  const s = await mustRead(layout, name);
  const { config } = await cliConfig(layout);
  const out = await startRun(layout, config, s, new Date(), { waitForSlot: false, manual: true });
  if (out.kind !== 'started')
    throw new FlotillaError(`run of '${name}' refused: ${out.reason}`, { code: 'schedule-run-refused' });
  if (opts.json) return printJson(out);
  process.stdout.write(`${out.id}\n`);
}
