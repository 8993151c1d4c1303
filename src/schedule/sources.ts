import { statSync } from 'node:fs';
import type { Definition } from '../definitions/types.js';
import { errorMessage } from '../errors.js';
import type { Layout } from '../layout/layout.js';
import { parseCron } from './cron.js';
import { isPaused, listSchedules, scheduleSchema, type Schedule } from './store.js';

/**
 * Every schedule of a fleet (§5.10): those added with `flotilla schedule add` and those in a
 * project definition's `schedule:` block. A name used by both is an error naming the file and
 * the added one fires; a definition schedule whose cron or time zone does not parse is an
 * error and the others fire. Untrusted and user-level definitions bring no schedules (the
 * loader drops them, docs/security-trust.md "Folder trust").
 */

export interface ScheduleSources {
  schedules: Schedule[];
  /** One line each: what is wrong and where, for `schedule list` and the scheduler's window. */
  errors: string[];
}

export function allSchedules(layout: Layout, definitions: readonly Definition[] = []): ScheduleSources {
  const { schedules, errors } = listSchedules(layout);
  const names = new Set(schedules.map((s) => s.name));
  for (const def of definitions) {
    for (const d of def.schedules ?? []) {
      const where = `${def.source.path} (schedule '${d.name}')`;
      if (names.has(d.name)) {
        errors.push(
          `${where}: a schedule named '${d.name}' exists already — set schedule.name in the file to another name`,
        );
        continue;
      }
      try {
        parseCron({ expr: d.cron, timezone: d.timezone });
      } catch (err) {
        errors.push(`${where}: ${errorMessage(err).split('\n')[0]} — fix schedule.cron in the file`);
        continue;
      }
      names.add(d.name);
      const stored = scheduleSchema.parse({ ...d, agent: def.name, createdAt: since(def.source.path) });
      schedules.push({ ...stored, paused: isPaused(layout, d.name), definedIn: def.source.path });
    }
  }
  return { schedules: schedules.sort((a, b) => a.name.localeCompare(b.name)), errors };
}

/**
 * When a definition's schedule began, for slots owed from before the first scheduler saw it:
 * the file's modification time (stable across ticks, unlike "now").
 */
function since(path: string): string {
  try {
    return statSync(path).mtime.toISOString();
  } catch {
    return new Date().toISOString();
  }
}
