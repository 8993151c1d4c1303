import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { isProcessAlive } from '../fleet/proc.js';
import type { Layout } from '../layout/layout.js';
import { readScheduleView, type ScheduleViewEntry } from './view.js';

/**
 * The schedules part of `flotilla status` and the dashboard (§5.10): every schedule with its
 * next fire and last result, as the running scheduler sees it; with none running, the
 * schedules on disk and that nothing fires them. Plain JSON reads only: `status` is on the
 * fast path (§14).
 */

export interface ScheduleSummary {
  running: boolean;
  schedules: ScheduleViewEntry[];
}

export function scheduleSummary(layout: Layout): ScheduleSummary | null {
  if (!existsSync(layout.schedulesDir) && !existsSync(layout.scheduleView)) return null;
  const view = readScheduleView(layout);
  // The view's writer still alive is the scheduler (the dashboard redraws often: no socket round trip).
  const running = view !== null && view.pid > 0 && isProcessAlive(view.pid, view.start ?? null);
  if (running && view) return { running, schedules: view.schedules };
  // No scheduler: what is on disk, and the definitions' schedules the last one saw.
  const stored = storedNames(layout)
    .map((name) => stored1(layout, name))
    .filter((e): e is ScheduleViewEntry => e !== null);
  const fromDefinitions = (view?.schedules ?? []).filter((e) => e.definedIn && !stored.some((s) => s.name === e.name));
  const schedules = [
    ...stored,
    ...fromDefinitions.map((e) => ({ ...e, next: null, lastResult: lastResult(layout, e.name) })),
  ].sort((a, b) => a.name.localeCompare(b.name));
  return schedules.length ? { running, schedules } : null;
}

export function formatScheduleSummary(summary: ScheduleSummary): string[] {
  const head = summary.running
    ? 'Schedules (scheduler running):'
    : "Schedules (no scheduler runs, so none fire — 'flotilla up' or 'flotilla scheduler' starts one):";
  return [
    head,
    ...summary.schedules.map((s) => {
      const when = s.paused ? 'paused' : summary.running ? `next ${s.next ?? '—'}` : 'not firing';
      const last = s.lastResult ? `${s.lastResult.status} (${s.lastResult.id})` : 'no run yet';
      return `  ${s.name}  ${s.cron}${s.timezone ? ` ${s.timezone}` : ''}  ${when}  last: ${last}`;
    }),
  ];
}

function storedNames(layout: Layout): string[] {
  try {
    return readdirSync(layout.schedulesDir)
      .filter((f) => f.endsWith('.json') && !f.endsWith('.state.json'))
      .map((f) => f.slice(0, -5));
  } catch {
    return [];
  }
}

function stored1(layout: Layout, name: string): ScheduleViewEntry | null {
  try {
    const s = JSON.parse(readFileSync(layout.schedule(name), 'utf8')) as {
      cron: string;
      timezone?: string | null;
      agent?: string | null;
    };
    return {
      name,
      cron: s.cron,
      timezone: s.timezone ?? null,
      agent: s.agent ?? null,
      paused: existsSync(layout.schedulePaused(name)),
      definedIn: null,
      next: null,
      lastResult: lastResult(layout, name),
    };
  } catch {
    return null;
  }
}

function lastResult(layout: Layout, name: string): ScheduleViewEntry['lastResult'] {
  try {
    return (
      (JSON.parse(readFileSync(layout.scheduleState(name), 'utf8')) as { lastResult?: ScheduleViewEntry['lastResult'] })
        .lastResult ?? null
    );
  } catch {
    return null;
  }
}
