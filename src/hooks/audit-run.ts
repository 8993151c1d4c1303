import { audit } from '../audit/audit.js';
import type { Layout } from '../layout/layout.js';
import type { HookRunRecord } from './schema.js';

/** The `hook_run` audit line for one run of a hook on an agent's behalf (§9); `extra` adds a team hook's fields. */
export function auditHookRun(
  layout: Layout,
  agent: string,
  r: HookRunRecord,
  extra: Record<string, unknown> = {},
): void {
  audit(layout, {
    event: 'hook_run',
    agent,
    hook: r.hook,
    command: r.command,
    exit_code: r.exitCode,
    duration_ms: Math.round(r.durationMs),
    timed_out: r.timedOut,
    ...extra,
  });
}
