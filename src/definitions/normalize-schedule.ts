import { ID_PATTERN } from '../fleet/ids.js';
import { describe } from './frontmatter.js';
import type { DefinitionSchedule, FieldIssue } from './types.js';

/**
 * `schedule:` in a definition's frontmatter (§5.10): one mapping, or a list of them, each
 * firing runs of this definition. Only the shape is checked here; the cron expression and
 * time zone are checked by the scheduler and `flotilla schedule list`, which load the cron
 * library (loading it here would slow every spawn, §14).
 */

type Issues = { errors: FieldIssue[]; warnings: FieldIssue[] };

const EXAMPLE = 'schedule: {cron: "0 9 * * 1-5", timezone: Europe/Berlin, task: "review the dependency updates"}';
const KEYS = new Set([
  'name',
  'cron',
  'timezone',
  'tz',
  'task',
  'model',
  'overlap',
  'catch_up',
  'timeout_secs',
  'max_cost_per_day',
  'max_tokens_per_day',
  'background',
  'notify',
]);

export function normalizeSchedule(v: unknown, defName: unknown, issues: Issues): DefinitionSchedule[] | undefined {
  if (v === undefined || v === null) return [];
  const entries = Array.isArray(v) ? v : [v];
  const out: DefinitionSchedule[] = [];
  for (const [i, entry] of entries.entries()) {
    const field = Array.isArray(v) ? `schedule[${i}]` : 'schedule';
    const bad = (f: string, what: string): undefined => {
      issues.errors.push({ field: f, message: `${what} (${f}) — e.g. ${EXAMPLE}` });
      return undefined;
    };
    if (typeof entry !== 'object' || entry === null || Array.isArray(entry))
      return bad(field, `${field} must be a mapping with cron and task, got ${describe(entry)}`);
    const e = entry as Record<string, unknown>;
    for (const key of Object.keys(e)) {
      if (!KEYS.has(key))
        issues.warnings.push({
          field: `${field}.${key}`,
          message: `unknown field '${field}.${key}' is ignored (${field}) — known: ${[...KEYS].filter((k) => k !== 'tz').join(', ')}`,
        });
    }
    const text = (key: string): string | null | undefined => {
      const x = e[key];
      if (x === undefined || x === null) return null;
      if (typeof x === 'string' && x.trim() !== '') return x.trim();
      return bad(`${field}.${key}`, `${field}.${key} must be text, got ${describe(x)}`);
    };
    const number = (key: string, integer = false): number | null | undefined => {
      const x = e[key];
      if (x === undefined || x === null) return null;
      if (typeof x === 'number' && x > 0 && (!integer || Number.isInteger(x))) return x;
      return bad(
        `${field}.${key}`,
        `${field}.${key} must be a ${integer ? 'whole ' : ''}number above 0, got ${describe(x)}`,
      );
    };
    const oneOf = <T extends string>(key: string, choices: readonly T[], fallback: T): T | undefined => {
      const x = e[key] ?? fallback;
      if (typeof x === 'string' && (choices as readonly string[]).includes(x)) return x as T;
      return bad(`${field}.${key}`, `${field}.${key} must be one of ${choices.join(', ')}, got ${describe(x)}`);
    };
    const cron = text('cron');
    const task = text('task');
    if (cron === null) return bad(`${field}.cron`, `${field} has no cron expression`);
    if (task === null) return bad(`${field}.task`, `${field} has no task: say what each run is asked to do`);
    const name =
      text('name') ?? (entries.length === 1 && typeof defName === 'string' ? defName.replace(/\./g, '-') : null);
    if (name === null) return bad(`${field}.name`, `${field} needs a name when a definition has several schedules`);
    if (name !== undefined && !ID_PATTERN.test(name))
      return bad(`${field}.name`, `${field}.name '${name}' is not valid: use 1-64 letters, digits, '_' or '-'`);
    const timezone = e.timezone !== undefined ? text('timezone') : text('tz');
    const model = text('model');
    const notify = text('notify');
    const overlap = oneOf('overlap', ['skip', 'queue', 'allow'] as const, 'skip');
    const catchUp = oneOf('catch_up', ['none', 'once'] as const, 'once');
    const timeoutSecs = number('timeout_secs');
    const maxCostPerDay = number('max_cost_per_day');
    const maxTokensPerDay = number('max_tokens_per_day', true);
    const background = e.background ?? false;
    if (typeof background !== 'boolean')
      return bad(`${field}.background`, `${field}.background must be true or false, got ${describe(background)}`);
    const parts = [
      cron,
      task,
      name,
      timezone,
      model,
      notify,
      overlap,
      catchUp,
      timeoutSecs,
      maxCostPerDay,
      maxTokensPerDay,
    ];
    if (parts.includes(undefined)) return undefined;
    out.push({
      name: name!,
      cron: cron!,
      task: task!,
      timezone: timezone!,
      model: model!,
      notify: notify!,
      overlap: overlap!,
      catchUp: catchUp!,
      timeoutSecs: timeoutSecs!,
      maxCostPerDay: maxCostPerDay!,
      maxTokensPerDay: maxTokensPerDay!,
      background,
    });
  }
  return out;
}
