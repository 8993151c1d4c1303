import { readFileSync, writeFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { PERMISSION_MODES } from '../../src/policy/permission-mode.js';
import { HOME_KINDS } from '../helpers/home.js';
import { eventually } from '../helpers/tmux.js';
import { completionsFrom } from '../spawn/helpers.js';
import type { Target } from './targets.js';
import { vendorFleets } from './vendor-suite.js';

/**
 * Nobody at the keyboard (docs/runtimes.md, "First-run answers"): in every permission mode, a
 * spawn in a fresh folder with a fresh HOME (of each shape) and only an API key in the environment reaches the
 * model — no first-run dialog (key confirmation, folder trust, onboarding, hook review, update
 * notice) stands in between. The real CLI, started by spawn-agent exactly as a person's spawn
 * starts it — its own default model and router, no --model — the fake server sees the task,
 * and its answer comes back as one completion.
 */
export function modeSuite(target: () => Target): void {
  const fleets = vendorFleets();

  const t = target();
  // A new person's home, one whose dot-folders are links (a dotfiles manager), and one whose
  // dot-folders cannot be written (test/helpers/home.ts): the sandbox binds what exists.
  describe.each(HOME_KINDS)(
    `${t.runtime.title}: the first model request, untouched, in every mode, on a %s home`,
    { timeout: 600_000 },
    (home) => {
      it.each(PERMISSION_MODES)('%s', async (mode) => {
        const f = await fleets.open({
          ...t,
          script: 'first.yaml',
          home,
          definitions: { a: `permissions:\n  permission_mode: ${mode}\n` },
          parentMode: mode === 'bypass_permissions' ? 'bypass_permissions' : 'dont_ask',
        });
        // The person's allowance, without which a bypass definition does not load.
        if (mode === 'bypass_permissions')
          writeFileSync(
            f.layout.configFile,
            readFileSync(f.layout.configFile, 'utf8').replace(
              'agents:\n',
              'agents:\n  allow_bypass_permissions: true\n',
            ),
          );
        // No --model: the CLI's own default model and router, as a plain spawn gets them.
        const id = await f.spawnChild('a', `${t.runtime.name}-${mode.replace('_', '-')}`, 'first-task-marker-31');
        await eventually(() => f.vendor.prompts.length >= 1, 240_000, 'the first model request');
        expect(f.vendor.seen()).toContain('first-task-marker-31');
        await eventually(() => completionsFrom(f, 'lead-parent', id).length === 1, 240_000, 'the completion');
        expect(completionsFrom(f, 'lead-parent', id)[0]!.body).toContain('the first request arrived');
      });
    },
  );
}
