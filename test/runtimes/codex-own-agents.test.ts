import { describe, expect, it } from 'vitest';
import { eventually } from '../helpers/tmux.js';
import { completionsFrom } from '../spawn/helpers.js';
import { TARGETS } from './targets.js';
import { vendorFleets } from './vendor-suite.js';

/**
 * Codex 0.169's default model is marked `multi_agent_version = "v2"` in the catalogue compiled
 * into the binary, which offers the model Codex's own sub-agents (`spawn_agent`,
 * `followup_task`, `send_message`, `wait_agent`, …) whatever `features.multi_agent_v2` says.
 * Agents started inside the CLI would be outside the fleet's lineage, caps, budget and
 * transcript, so the fleet gives Codex its own catalogue with them off (docs/runtimes.md,
 * "Codex's model catalogue"). What the person gets: a Codex agent on the default model, started
 * as a person's spawn starts it, in a mode where Flotilla's bubblewrap holds the CLI
 * (`dont_ask`) and one where Codex sandboxes its own commands (`default`), is offered no tool
 * of Codex's own team, and still works.
 */
const fleets = vendorFleets();

const OWN_AGENT_TOOLS = /spawn_agent|followup_task|wait_agent|interrupt_agent|list_agents|collaboration__/;

describe("a Codex agent on Codex's default model is not offered Codex's own sub-agents", { timeout: 600_000 }, () => {
  it.each(['dont_ask', 'default'] as const)('%s', async (mode) => {
    const t = { ...TARGETS.codex(), spawnArgs: [] };
    const f = await fleets.open({
      ...t,
      script: 'first.yaml',
      definitions: { a: `permissions:\n  permission_mode: ${mode}\n` },
    });
    const id = await f.spawnChild('a', `codex-own-agents-${mode.replace('_', '-')}`, 'hello', t.spawnArgs);
    await eventually(() => completionsFrom(f, 'lead-parent', id).length === 1, 300_000, 'the completion');
    expect(completionsFrom(f, 'lead-parent', id)[0]!.body).toContain('Final answer: the first request arrived');
    const offered = f.vendor.tools.flat();
    // Still its own model's tools (code mode), so the request really was the default model's.
    expect(offered).toContain('exec');
    expect(offered.filter((name) => OWN_AGENT_TOOLS.test(name))).toEqual([]);
  });
});
