import { afterEach, describe, expect, it } from 'vitest';
import { flotilla } from '../helpers/cli.js';
import { tempDir } from '../helpers/fleet.js';
import { pinnedRuntimeBinary } from '../runtimes/helpers.js';

let cwd: ReturnType<typeof tempDir> | undefined;
afterEach(() => cwd?.cleanup());

/**
 * `flotilla doctor --runtimes` starts each vendor CLI found in every permission mode, as the
 * runtime tests do, against a local stand-in for its API, and says which modes reach the
 * model. Here the pinned CLIs: every mode of each reaches it.
 */
describe('flotilla doctor --runtimes', { timeout: 300_000 }, () => {
  it('reports, per CLI, every mode whose start reached the model', async () => {
    cwd = tempDir('flotilla-doctor-runtimes-');
    const bins = {
      FLOTILLA_CLAUDE_BIN: pinnedRuntimeBinary('claude'),
      FLOTILLA_CODEX_BIN: pinnedRuntimeBinary('codex'),
      FLOTILLA_GEMINI_BIN: pinnedRuntimeBinary('gemini'),
    };
    const r = await flotilla(['doctor', '--runtimes'], { cwd: cwd.dir, env: { ...bins, HOME: cwd.dir } });
    expect(String(r.stdout).split('\n').filter(Boolean)).toEqual([
      `ok    runtime claude modes: reach the model: plan, default, accept_edits, dont_ask, bypass_permissions (${bins.FLOTILLA_CLAUDE_BIN})`,
      `ok    runtime codex modes: reach the model: plan, default, accept_edits, dont_ask, bypass_permissions (${bins.FLOTILLA_CODEX_BIN})`,
      `ok    runtime gemini modes: reach the model: plan, default, accept_edits, dont_ask, bypass_permissions (${bins.FLOTILLA_GEMINI_BIN})`,
    ]);
    expect(r.exitCode).toBe(0);
  });
});
