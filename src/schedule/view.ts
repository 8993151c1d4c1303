import { readFileSync } from 'node:fs';
import { writeFileAtomic } from '../layout/atomic.js';
import type { Layout } from '../layout/layout.js';

/**
 * What the running scheduler sees (§5.10), written by it whenever that changes, so `flotilla
 * status` and the dashboard list every schedule — a definition's `schedule:` blocks included —
 * with its next fire, without loading definitions or the cron library (§14).
 */

export interface ScheduleViewEntry {
  name: string;
  cron: string;
  timezone: string | null;
  agent: string | null;
  paused: boolean;
  /** The definition file of a `schedule:` block; null for `flotilla schedule add`. */
  definedIn: string | null;
  next: string | null;
  lastResult: { id: string; status: string; at: string } | null;
}

export interface ScheduleView {
  /** The scheduler's pid, so a reader can tell a view left by one that died; 0 once it stopped. */
  pid: number;
  /**
   * That pid's start time (fleet/proc.ts selfProcess), so a reused pid reads as gone; absent in views written before
   * it.
   */
  start?: string | null;
  schedules: ScheduleViewEntry[];
  errors: string[];
}

export function writeScheduleView(layout: Layout, view: ScheduleView): void {
  writeFileAtomic(layout.scheduleView, `${JSON.stringify(view)}\n`);
}

export function readScheduleView(layout: Layout): ScheduleView | null {
  try {
    const v = JSON.parse(readFileSync(layout.scheduleView, 'utf8')) as ScheduleView;
    return Array.isArray(v.schedules) ? v : null;
  } catch {
    return null;
  }
}
