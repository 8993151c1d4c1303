import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { eventually } from '../helpers/tmux.js';
import { completionsFrom } from '../spawn/helpers.js';
import { TARGETS } from './targets.js';
import { vendorFleets } from './vendor-suite.js';

/**
 * Codex in `default` and `accept_edits` runs each command in its own sandbox (docs/security.md,
 * "Vendor CLIs"), which needs helper links Codex makes in its CODEX_HOME — and Codex refuses to
 * make them under the temporary folder, where a project tried out in `mktemp -d` (and every
 * test's) keeps its fleet root. What the person gets: the command runs and the model sees its
 * output, in a fresh folder under the temporary folder, started as a person's spawn starts it.
 */
const fleets = vendorFleets();

describe(
  "a Codex command runs in Codex's own sandbox when the project is under the temporary folder",
  { timeout: 600_000 },
  () => {
    it.each([
      ['default', 'own-sandbox-read-41', 'own-sandbox-ran-57'],
      ['accept_edits', 'own-sandbox-write-42', 'wrote-in-sandbox-58'],
    ] as const)('%s', async (mode, prompt, output) => {
      const t = TARGETS.codex();
      const f = await fleets.open({
        ...t,
        script: 'own-sandbox.yaml',
        definitions: { a: `permissions:\n  permission_mode: ${mode}\n` },
      });
      const id = await f.spawnChild('a', `codex-${mode.replace('_', '-')}`, prompt, t.spawnArgs);
      await eventually(() => completionsFrom(f, 'lead-parent', id).length === 1, 300_000, 'the completion');
      const body = completionsFrom(f, 'lead-parent', id)[0]!.body;
      expect(body).not.toContain('codex-linux-sandbox');
      expect(body).toContain(output);
      if (mode === 'accept_edits') expect(readFileSync(join(f.project, 'made.txt'), 'utf8')).toBe('made-in-sandbox\n');
    });
  },
);
