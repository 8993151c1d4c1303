import { describe, expect, it } from 'vitest';
import { eventually } from '../helpers/tmux.js';
import { completionsFrom } from '../spawn/helpers.js';
import { modeSuite } from './modes.js';
import { TARGETS } from './targets.js';
import { DONT_ASK, vendorFleets } from './vendor-suite.js';

modeSuite(TARGETS.codex);

/**
 * An older model of Codex's own catalogue — one a person may well name — opens a "Meet
 * <new model>" dialog before the first turn in a fresh CODEX_HOME (docs/runtimes.md,
 * "First-run answers"). With nobody at the keyboard the agent must reach that model anyway.
 */
describe('Codex: an older model of its catalogue reaches the model, no migration dialog', { timeout: 600_000 }, () => {
  const fleets = vendorFleets();

  it.each(['gpt-5.5', 'gpt-5.6-sol'])('%s', async (model) => {
    const t = TARGETS.codex();
    const f = await fleets.open({
      ...t,
      script: 'first.yaml',
      definitions: { a: DONT_ASK },
    });
    const id = await f.spawnChild('a', `codex-${model.replace(/\./g, '-')}`, 'first-task-marker-31', [
      '--model',
      model,
    ]);
    await eventually(() => completionsFrom(f, 'lead-parent', id).length === 1, 240_000, 'the completion');
    expect(f.vendor.seen()).toContain('first-task-marker-31');
    expect(f.vendor.bodies.map((b) => b.model)).toContain(model);
    expect(completionsFrom(f, 'lead-parent', id)[0]!.body).toContain('the first request arrived');
  });
});
