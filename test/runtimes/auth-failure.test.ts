import { readFileSync, writeFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { countHeld } from '../../src/fleet/slots.js';
import { eventually } from '../helpers/tmux.js';
import { completionsFrom } from '../spawn/helpers.js';
import { TARGETS } from './targets.js';
import { DONT_ASK, RUNTIMES, vendorFleets } from './vendor-suite.js';

/**
 * Fail fast, never hang (docs/runtimes.md, "Logins"): a CLI that passed the preflight (a key
 * is set) but whose key the vendor refuses — a revoked key, an expired login — ends the agent
 * `failed` with the CLI's own reason, frees its running slot and sends exactly one completion,
 * instead of holding the slot at an error in its pane until the task timeout.
 */
const fleets = vendorFleets();

/** What each CLI says when the vendor refuses its key (its own words, carried into the reason). */
const REASONS: Record<keyof typeof TARGETS, RegExp> = {
  claude: /invalid api key|please run \/login|authentication/i,
  codex: /401|unauthorized|incorrect api key/i,
  gemini: /401|invalid authentication|unauthenticated/i,
};

describe('an authentication error after the CLI started', { timeout: 600_000 }, () => {
  it.each(RUNTIMES)("%s: the agent ends failed with the CLI's reason, its slot free, one completion", async (name) => {
    const t = TARGETS[name]();
    const f = await fleets.open({
      ...t,
      script: 'first.yaml',
      definitions: { a: DONT_ASK },
    });
    // The default retry count (the test fleets use 0): the bound holds with the retries a person gets.
    writeFileSync(
      f.layout.configFile,
      readFileSync(f.layout.configFile, 'utf8').replace('max_retries: 0', 'max_retries: 3'),
    );
    f.vendor.reject = 401;
    const id = await f.spawnChild('a', `${name}-revoked`, 'first-task-marker-31', t.spawnArgs);
    await eventually(() => f.vendor.rejected > 0, 240_000, 'the refused request');
    // The bound: failed within 30 s of the refusal, never the task timeout.
    await eventually(() => f.record(id).status === 'failed', 30_000, 'the agent failed');
    expect(f.record(id).exitReason).toMatch(REASONS[name]);
    // The record ends first, then the shim lets go of its slot on its way out.
    let held = -1;
    await eventually(async () => (held = await countHeld(f.layout, 8)) === 0, 30_000, `the slot free (${held} held)`);
    await eventually(() => completionsFrom(f, 'lead-parent', id).length > 0, 30_000, 'the completion');
    await new Promise((r) => setTimeout(r, 1500));
    const done = completionsFrom(f, 'lead-parent', id);
    expect(done).toHaveLength(1);
    expect(done[0]).toMatchObject({ status: 'failed' });
    expect(done[0]!.body).toMatch(REASONS[name]);
    expect(f.vendor.prompts).toHaveLength(0);
  });
});
