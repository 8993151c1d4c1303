import { describe, expect, it } from 'vitest';
import { eventually } from '../helpers/tmux.js';
import { completionsFrom, scriptedDefinition } from '../spawn/helpers.js';
import { TARGETS } from './targets.js';
import { DONT_ASK, RUNTIMES, vendorFleets } from './vendor-suite.js';

const fleets = vendorFleets();

/**
 * A vendor agent's fleet tools are served by its shim (harness/door-send.ts), in the sandbox's default for each CLI:
 * spawn_agent from the CLI makes a child of that agent, with the spawner's environment the agent's commands get, and
 * with `wait` hands the CLI the child's answer. Asserted on what the parent of the vendor agent got.
 */
describe("spawn_agent from a vendor CLI's fleet tools", { timeout: 600_000 }, () => {
  it.each(RUNTIMES)('%s: the child is its own, and its answer comes back through the tool', async (name) => {
    const t = TARGETS[name]();
    const f = await fleets.open({ ...t, script: 'mcp-spawn.yaml', definitions: { a: DONT_ASK } });
    // The child runs on Flotilla's own harness with the scripted model: it answers with its shell's output.
    scriptedDefinition(f.layout, 'worker', 'worker.yaml');
    const id = await f.spawnChild('a', `${name}-mcp`, 'delegate', t.spawnArgs);
    await eventually(() => completionsFrom(f, 'lead-parent', id).length === 1, 480_000, 'the answer');
    expect(completionsFrom(f, 'lead-parent', id)[0]!.body).toContain('Answer: result-of-mk');
    expect(f.record('mk')).toMatchObject({ parentId: id, depth: 2 });
  });
});
