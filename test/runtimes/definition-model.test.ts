import { describe, expect, it } from 'vitest';
import { eventually } from '../helpers/tmux.js';
import { TARGETS } from './targets.js';
import { DONT_ASK, vendorFleets } from './vendor-suite.js';

/**
 * The model a vendor agent's definition names (`model:` beside `runtime:`, §7) is the model its
 * CLI runs, as `--model` would make it: Codex asks the provider for it. `inherit` names none.
 */
const fleets = vendorFleets();

describe("a vendor definition's model", { timeout: 600_000 }, () => {
  it('codex: model: in the definition is the model of its record and of its requests', async () => {
    const t = TARGETS.codex();
    const f = await fleets.open({
      ...t,
      script: 'report.yaml',
      definitions: {
        a: `model: fake-responses-model\n${DONT_ASK}`,
        b: `model: inherit\n${DONT_ASK}`,
      },
    });
    const id = await f.spawnChild('a', 'codex-def-model', 'report to your parent');
    expect(f.record(id).model).toBe('codex:fake-responses-model');
    await eventually(() => f.vendor.bodies.length > 0, 240_000, 'the first model request');
    expect(f.vendor.bodies[0]!.model).toBe('fake-responses-model');
    const inherits = await f.spawnChild('b', 'codex-inherit', 'report to your parent');
    expect(f.record(inherits).model).toBe('codex');
  });
});
