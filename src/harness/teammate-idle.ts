import type { Config } from '../config/schema.js';
import type { AgentRecord } from '../fleet/record.js';
import { readRecord } from '../fleet/registry.js';
import type { HookContext } from '../hooks/run-hooks.js';
import type { Layout } from '../layout/layout.js';

/**
 * TeammateIdle (docs/hooks.md "Team hooks"): when a persistent agent goes idle after work,
 * the config's `hooks.teammate_idle` commands run with its identity. A hook that exits 2
 * keeps it working: its stderr is delivered to the agent as a `system` message (the config
 * is a person's, so its word is Flotilla's), which the idle agent takes as its next task.
 * Undefined when no such hook is configured.
 */
export function teammateIdle(
  layout: Layout,
  config: Config,
  rec: AgentRecord,
  ctx: HookContext,
): (() => Promise<void>) | undefined {
  const commands = config.hooks.teammate_idle;
  if (commands.length === 0) return undefined;
  return async () => {
    const [{ runTeamHooks }, { deliver }] = await Promise.all([
      import('../hooks/team-hooks.js'),
      import('../inbox/deliver.js'),
    ]);
    const now = readRecord(layout, rec.id) ?? rec;
    const last = now.lastTask;
    const out = await runTeamHooks('TeammateIdle', commands, ctx, {
      last_task: last
        ? { task: last.task, status: last.status, exit_reason: last.exitReason, output_path: last.outputPath }
        : null,
    });
    if (out.feedback === null) return;
    await deliver(
      layout,
      {
        from: 'human',
        to: rec.id,
        kind: 'system',
        priority: 'high',
        summary: 'The TeammateIdle hook has more for you to do',
        body: out.feedback,
      },
      { maxBodyBytes: config.inbox.max_body_bytes },
    );
  };
}
