import { describe, expect, it } from 'vitest';
import { readAudit } from '../../src/audit/read.js';
import { eventually } from '../helpers/tmux.js';
import { completionsFrom } from '../spawn/helpers.js';
import { TARGETS } from './targets.js';
import { vendorFleets } from './vendor-suite.js';

/**
 * The task board from a vendor CLI (docs/design.md §15): the parent (this test process, a
 * registered agent) adds a task to the fleet's board; a Claude, a Codex and a Gemini agent,
 * each started by spawn-agent exactly as a person's spawn starts it, are told by their model to
 * claim it with the fleet's MCP tool and finish it with a result. What the user gets: the board
 * shows the task done by that agent with the result, the audit has the claim and the
 * completion, and the parent got one completion. In `dont_ask` and in `default`, where fleet
 * tools run without a question as in the harness (§7): nobody answers one here, so a CLI that
 * asked would never finish.
 */

const fleets = vendorFleets();

interface ShownTask {
  id: string;
  status: string;
  claimed_by: string | null;
  created_by: string;
  result: string | null;
}

describe('a vendor agent claims and finishes a board task over MCP', { timeout: 600_000 }, () => {
  it.each([
    ['claude', 'dont_ask'],
    ['codex', 'dont_ask'],
    ['gemini', 'dont_ask'],
    ['claude', 'default'],
    ['codex', 'default'],
    ['gemini', 'default'],
  ] as const)('%s in %s', async (name, mode) => {
    const t = TARGETS[name]();
    const f = await fleets.open({
      ...t,
      script: 'task-claim.yaml',
      definitions: { a: `permissions:\n  permission_mode: ${mode}\n` },
    });
    const added = await f.flotilla([
      'task',
      'add',
      'count the widgets',
      '--id',
      'vt1',
      '--body',
      'There are 42 widgets in the crate.',
    ]);
    expect(added.exitCode, added.stderr).toBe(0);

    const id = await f.spawnChild(
      'a',
      `${name}-${mode.replace('_', '-')}`,
      'take task vt1 from the board',
      t.spawnArgs,
    );
    await eventually(() => completionsFrom(f, 'lead-parent', id).length > 0, 480_000, 'the completion');

    const shown = await f.flotilla(['task', 'show', 'vt1', '--json']);
    expect(shown.exitCode, shown.stderr).toBe(0);
    const task = JSON.parse(shown.stdout) as ShownTask;
    expect(task).toMatchObject({ status: 'done', claimed_by: id, created_by: 'lead-parent' });
    // The result is the model's own, and it quotes the body the claim showed it.
    expect(task.result).toMatch(/^worked over MCP after reading: .*There are 42 widgets in the crate\./);
    expect(readAudit(f.layout, { event: 'task_claimed' }).lines).toEqual([
      expect.objectContaining({ agent: id, task: 'vt1' }),
    ]);
    expect(readAudit(f.layout, { event: 'task_done' }).lines).toEqual([
      expect.objectContaining({ agent: id, task: 'vt1' }),
    ]);
    // One completion, still one a moment later; its answer is the tool's report of the update.
    await new Promise((r) => setTimeout(r, 1500));
    const done = completionsFrom(f, 'lead-parent', id);
    expect(done).toHaveLength(1);
    expect(done[0]).toMatchObject({ status: 'completed' });
    expect(done[0]!.body).toContain('Task vt1 is now done');
  });
});
