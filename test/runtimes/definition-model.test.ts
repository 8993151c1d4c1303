import { afterEach, describe, expect, it } from 'vitest';
import { eventually } from '../helpers/tmux.js';
import { explain } from './suite.js';
import { vendorFleet, type VendorFleet } from './helpers.js';
import { TARGETS } from './targets.js';

/**
 * The model a vendor agent's definition names (`model:` beside `runtime:`, §7) is the model its
 * CLI runs, as `--model` would make it: Codex asks the provider for it. `inherit` names none.
 */
let fleet: VendorFleet | undefined;
afterEach(async (ctx) => {
  if (fleet && ctx.task.result?.state === 'fail') await explain(fleet);
  await fleet?.dispose();
  fleet = undefined;
});

describe("a vendor definition's model", { timeout: 600_000 }, () => {
  it('codex: model: in the definition is the model of its record and of its requests', async () => {
    const t = TARGETS.codex();
    const f = await vendorFleet({
      ...t,
      script: 'report.yaml',
      definitions: {
        a: 'model: fake-responses-model\npermissions:\n  permission_mode: dont_ask\n',
        b: 'model: inherit\npermissions:\n  permission_mode: dont_ask\n',
      },
    });
    fleet = f;
    const id = await f.spawnChild('a', 'codex-def-model', 'report to your parent');
    expect(f.record(id).model).toBe('codex:fake-responses-model');
    await eventually(() => f.vendor.bodies.length > 0, 240_000, 'the first model request');
    expect(f.vendor.bodies[0]!.model).toBe('fake-responses-model');
    const inherits = await f.spawnChild('b', 'codex-inherit', 'report to your parent');
    expect(f.record(inherits).model).toBe('codex');
  });
});
