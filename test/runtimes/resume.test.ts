import { describe, expect, it } from 'vitest';
import { createRecord } from '../../src/fleet/registry.js';
import { recordInput } from '../helpers/records.js';
import { eventually } from '../helpers/tmux.js';
import { completionsFrom } from '../spawn/helpers.js';
import { TARGETS } from './targets.js';
import { DONT_ASK, RUNTIMES, vendorFleets } from './vendor-suite.js';

/**
 * `flotilla resume` of a vendor agent (docs/runtimes.md, "Resume and transcript"): a new agent
 * whose CLI continues the old agent's own session with the CLI's resume command. What the
 * person gets: the model's next request carries the earlier turns (the first task, the command
 * it ran and its own answer) followed by the new prompt; the old agent's unread mail is the
 * new agent's; its answer is one completion to the old agent's parent.
 */
const fleets = vendorFleets();

describe("flotilla resume continues a vendor agent's own session", { timeout: 600_000 }, () => {
  it.each(RUNTIMES)(
    "%s: the resumed CLI's next request carries the earlier turns; adopted mail and one completion",
    async (name) => {
      const t = TARGETS[name]();
      const f = await fleets.open({ ...t, script: 'resume.yaml', definitions: { a: DONT_ASK } });
      const old = await f.spawnChild('a', `${name}-first`, 'first-task-marker-12', t.spawnArgs);
      await eventually(
        () => completionsFrom(f, 'lead-parent', old).length === 1,
        240_000,
        "the first task's completion",
      );
      expect(completionsFrom(f, 'lead-parent', old)[0]!.body).toMatch(
        /first-answer-marker-53 \(.*tool-output-marker-81/,
      );
      await eventually(() => f.record(old).status === 'idle', 60_000, 'idle');
      expect((await f.flotilla(['cancel', old])).exitCode).toBe(0);
      await eventually(() => !['idle', 'working'].includes(f.record(old).status), 120_000, 'the first agent ended');
      // Cancelled while idle after a completed task: `cancelled`, as the harness ends one.
      expect(f.record(old)).toMatchObject({ status: 'cancelled', exitReason: 'cancelled (SIGTERM)' });
      // Mail that reaches the old agent after it ended waits for whoever continues it.
      expect((await f.flotilla(['send', old, 'adopted-mail-marker-56'])).exitCode).toBe(0);
      const before = f.vendor.prompts.length;
      // A vendor CLI continues in a window: --oneshot is a usage error, and nothing is created.
      const oneshot = await f.flotilla(['resume', old, '--oneshot', 'second-task-marker-34']);
      expect(oneshot.exitCode).toBe(2);
      expect(oneshot.stderr).toContain(`resume it without --oneshot`);
      expect(
        f
          .records()
          .map((r) => r.id)
          .sort(),
      ).toEqual([old, 'lead-parent'].sort());

      const resumed = await f.flotilla(['resume', old, '--id', `${name}-second`, 'second-task-marker-34']);
      expect(resumed.exitCode, resumed.stderr).toBe(0);
      const id = resumed.stdout.trim();
      expect(id).toBe(`${name}-second`);
      expect(resumed.stderr).toContain(`Resuming ${old}`);
      expect(f.record(id)).toMatchObject({ runtime: name, resumedFrom: old, parentId: 'lead-parent', depth: 1 });

      await eventually(
        () => completionsFrom(f, 'lead-parent', id).length >= 1,
        240_000,
        "the resumed task's completion",
      );
      expect(completionsFrom(f, 'lead-parent', id)[0]!.body).toContain('resumed-answer-marker-77');
      // The request that answered the new prompt: the whole earlier session, then the new prompt.
      const asked = f.vendor.prompts.slice(before).map((p) => JSON.stringify(p));
      const next = asked.find((p) => p.includes('second-task-marker-34'));
      expect(next, 'a request with the new prompt').toBeDefined();
      expect(next).toContain('first-task-marker-12');
      expect(next).toContain('tool-output-marker-81');
      expect(next).toContain('first-answer-marker-53');
      expect(next!.indexOf('first-task-marker-12')).toBeLessThan(next!.indexOf('second-task-marker-34'));
      // Asked once, with the fleet tools offered in that request.
      expect(next!.split('second-task-marker-34')).toHaveLength(2);
      expect(f.vendor.tools[before + asked.indexOf(next!)]).toContain(`${t.runtime.mcpToolPrefix}send_message`);
      // The old agent's unread mail was adopted and handed to the resumed CLI.
      expect(f.mail(old).some((m) => m.body?.includes('adopted-mail-marker-56'))).toBe(false);
      expect(f.mail(id).some((m) => m.body?.includes('adopted-mail-marker-56'))).toBe(true);
      await eventually(
        () => f.vendor.seen().includes('adopted-mail-marker-56'),
        240_000,
        'the adopted mail reached the model',
      );
      await new Promise((r) => setTimeout(r, 1500));
      expect(completionsFrom(f, 'lead-parent', old)).toHaveLength(1);
      // Its usage and answers are its own: the inherited session's two answers are not counted again.
      // Counted from its session file after the turn ends, a moment after the completion went.
      await eventually(() => f.record(id).turns >= 1, 60_000, "the resumed agent's own turns counted");
      expect(f.record(id).turns).toBeLessThanOrEqual(2);
    },
  );

  it('a vendor agent whose CLI left no session file is refused with what to do, and nothing is created', async () => {
    const t = TARGETS.claude();
    const f = await fleets.open({ ...t, script: 'resume.yaml', definitions: { a: DONT_ASK } });
    createRecord(
      f.layout,
      recordInput('claude-gone', {
        name: 'a',
        parentId: 'lead-parent',
        rootId: 'lead-parent',
        depth: 1,
        cwd: f.project,
        mode: 'interactive',
        runtime: 'claude',
        model: 'claude',
        status: 'completed',
        finishedAt: new Date().toISOString(),
      }),
    );
    const r = await f.flotilla(['resume', 'claude-gone', 'go on']);
    expect(r.exitCode).toBe(1);
    expect(r.stderr).toContain(
      "cannot resume 'claude-gone': claude-gone is a Claude Code agent and Claude Code wrote no session file",
    );
    expect(r.stderr).toContain('spawn a new agent instead');
    expect(
      f
        .records()
        .map((x) => x.id)
        .sort(),
    ).toEqual(['claude-gone', 'lead-parent']);
  });
});
