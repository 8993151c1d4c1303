import { describe, expect, it } from 'vitest';
import { eventually } from '../helpers/tmux.js';
import { completionsFrom, scriptedDefinition } from '../spawn/helpers.js';
import { TARGETS } from './targets.js';
import { DONT_ASK, vendorFleets } from './vendor-suite.js';

const fleets = vendorFleets();

/**
 * A result handed on is read (docs/decisions.md "Handed on is read"): a vendor agent whose own
 * shell ran `spawn-agent --wait` has the child's answer in that command's output, so the child's
 * completion is claimed in its inbox and never typed into the CLI: no model turn is paid for it.
 */
describe("spawn-agent --wait from Claude Code's shell", { timeout: 600_000 }, () => {
  it("the child's completion is read, never typed in: the vendor is asked nothing about it", async () => {
    const t = TARGETS.claude();
    const f = await fleets.open({ ...t, script: 'shell-wait.yaml', definitions: { a: DONT_ASK } });
    // The child runs on Flotilla's own harness with the scripted model: it answers with its shell's output.
    scriptedDefinition(f.layout, 'worker', 'worker.yaml');
    const id = await f.spawnChild('a', 'claude-waits', 'delegate', t.spawnArgs);
    await eventually(() => completionsFrom(f, 'lead-parent', id).length === 1, 480_000, 'the first answer');
    expect(completionsFrom(f, 'lead-parent', id)[0]!.body).toContain('Final answer: waited, Answer: result-of-sw');
    // The child's completion reached the agent's inbox and is read there.
    await eventually(
      () => completionsFrom(f, id, 'sw').filter((m) => m.file!.startsWith('cur/')).length === 1,
      60_000,
      "the child's completion read",
    );

    // A follow-up: the turn it starts would carry any mail still unread; the CLI asks the vendor in order.
    expect((await f.flotilla(['send', id, 'follow-up-8841'])).exitCode).toBe(0);
    await eventually(() => completionsFrom(f, 'lead-parent', id).length >= 2, 240_000, 'the follow-up answered');
    expect(f.vendor.seen()).toContain('follow-up-8841');
    expect(f.vendor.seen()).not.toMatch(/<inbox-message[^>]*from="sw"/);
    // One answer per task: the delegated one and the follow-up, none for the child's completion.
    const bodies = completionsFrom(f, 'lead-parent', id).map((m) => m.body);
    expect(bodies).toHaveLength(2);
    expect(bodies).toEqual(
      expect.arrayContaining([
        expect.stringContaining('Final answer: waited') as unknown,
        expect.stringContaining('Final answer: mail answered') as unknown,
      ]),
    );
    expect(completionsFrom(f, id, 'sw')).toHaveLength(1);
  });
});
