import { readFileSync, writeFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { eventually } from '../helpers/tmux.js';
import { completionsFrom } from '../spawn/helpers.js';
import type { VendorFleet } from './helpers.js';
import { TARGETS } from './targets.js';
import { DONT_ASK, RUNTIMES, vendorFleets } from './vendor-suite.js';

/**
 * The fleet's limits for a vendor CLI (docs/runtimes.md, "Limits"), with the harness's
 * semantics: a task whose model answers reach max_turns ends `failed` (`max_turns`); one that
 * runs past timeout_secs ends `timed_out` (`timeout`). Each is exactly one completion, and the
 * agent stays, idle, with its CLI alive for the next message.
 */
const fleets = vendorFleets();

async function oneCompletion(f: VendorFleet, id: string) {
  await eventually(() => completionsFrom(f, 'lead-parent', id).length > 0, 240_000, 'the completion');
  await new Promise((r) => setTimeout(r, 1500));
  const done = completionsFrom(f, 'lead-parent', id);
  expect(done).toHaveLength(1);
  return done[0]!;
}

describe('max_turns and timeout_secs end a vendor task as they end ours', { timeout: 600_000 }, () => {
  it.each(RUNTIMES)(
    '%s: max_turns 2 ends a task that never stops on its own: failed (max_turns), the agent idle',
    async (name) => {
      const t = TARGETS[name]();
      const f = await fleets.open({ ...t, script: 'loop.yaml', definitions: { a: `max_turns: 2\n${DONT_ASK}` } });
      const id = await f.spawnChild('a', `${name}-turns`, 'loop forever', t.spawnArgs);
      const done = await oneCompletion(f, id);
      expect(done).toMatchObject({ status: 'failed', exit_reason: 'max_turns' });
      await eventually(() => f.record(id).status === 'idle', 60_000, 'idle');
      expect(f.record(id).lastTask).toMatchObject({ status: 'failed', exitReason: 'max_turns' });
      // Stopped at the limit: the model is not asked on and on. How many requests the CLI has in
      // flight when it is stopped depends on the machine's speed, so the count is not fixed; that
      // it stops is.
      const asked = f.vendor.prompts.length;
      await new Promise((r) => setTimeout(r, 3000));
      expect(f.vendor.prompts.length).toBe(asked);
      expect(f.cliPid(id)).toBeDefined();
    },
  );

  it.each(RUNTIMES)(
    '%s: timeout_secs 5 ends a task still working: timed_out (timeout), the agent idle',
    async (name) => {
      const t = TARGETS[name]();
      const f = await fleets.open({
        ...t,
        script: 'sleeper.yaml',
        definitions: { a: `${DONT_ASK}  timeout_secs: 5\n` },
      });
      const id = await f.spawnChild('a', `${name}-timeout`, 'sleep', t.spawnArgs);
      const done = await oneCompletion(f, id);
      expect(done).toMatchObject({ status: 'timed_out', exit_reason: 'timeout' });
      expect(f.record(id)).toMatchObject({
        status: 'idle',
        lastTask: expect.objectContaining({ status: 'timed_out' }),
      });
      expect(f.cliPid(id)).toBeDefined();
    },
  );

  it("gemini: the same command every turn for 8 turns is ended by max_turns, not held at Gemini's loop-detection dialog", async () => {
    // Gemini CLI takes five identical tool calls in a row for a loop and asks a person whether to
    // keep its loop detection, a dialog no one answers; the fleet's own limits stop a loop.
    const t = TARGETS.gemini();
    const f = await fleets.open({ ...t, script: 'loop.yaml', definitions: { a: `max_turns: 8\n${DONT_ASK}` } });
    const id = await f.spawnChild('a', 'gemini-repeats', 'loop forever', t.spawnArgs);
    const done = await oneCompletion(f, id);
    expect(done).toMatchObject({ status: 'failed', exit_reason: 'max_turns' });
    await eventually(() => f.record(id).status === 'idle', 60_000, 'idle');
    expect(f.vendor.prompts.length).toBeGreaterThanOrEqual(8);
  });

  it("codex: the tree budget, fed by the CLI's own token counts while it works, ends the task failed (budget)", async () => {
    const t = TARGETS.codex();
    const f = await fleets.open({ ...t, script: 'loop.yaml', definitions: { a: DONT_ASK } });
    writeFileSync(
      f.layout.configFile,
      `${readFileSync(f.layout.configFile, 'utf8')}budget:\n  max_tokens_per_tree: 50\n`,
    );
    const id = await f.spawnChild('a', 'codex-budget', 'loop forever', t.spawnArgs);
    const done = await oneCompletion(f, id);
    expect(done).toMatchObject({ status: 'failed', exit_reason: 'budget' });
    expect(f.record(id).usage.inputTokens + f.record(id).usage.outputTokens).toBeGreaterThanOrEqual(50);
    expect(f.record(id).lastTask).toMatchObject({ status: 'failed', exitReason: 'budget' });
  });

  it("codex: idle_timeout_secs ends an agent idle that long: completed (idle timeout), its CLI stopped, the task's one completion only", async () => {
    const t = TARGETS.codex();
    const f = await fleets.open({ ...t, script: 'first.yaml', definitions: { a: DONT_ASK } });
    writeFileSync(f.layout.configFile, `${readFileSync(f.layout.configFile, 'utf8')}limits:\n  idle_timeout_secs: 5\n`);
    const id = await f.spawnChild('a', 'codex-idle', 'first-task-marker-31', t.spawnArgs);
    await oneCompletion(f, id);
    await eventually(() => f.record(id).status === 'completed', 120_000, 'the agent ended');
    expect(f.record(id).exitReason).toBe('idle timeout');
    expect(f.cliPid(id)).toBeUndefined();
    expect(completionsFrom(f, 'lead-parent', id)).toHaveLength(1);
  });
});
