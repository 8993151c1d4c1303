import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { flotilla } from '../helpers/cli.js';
import { tempDir } from '../helpers/fleet.js';
import { testHome } from '../helpers/home.js';
import { pinnedRuntimeBinary } from '../runtimes/helpers.js';

const made: { cleanup(): void }[] = [];
afterEach(() => made.splice(0).forEach((d) => d.cleanup()));

/**
 * `flotilla doctor --runtimes` starts each vendor CLI found in every permission mode, as the
 * runtime tests do, against a local stand-in for its API, and says which modes reach the
 * model. Here the pinned CLIs: every mode of each reaches it.
 */
describe('flotilla doctor --runtimes', { timeout: 300_000 }, () => {
  it('reports, per CLI, every mode whose start reached the model', async () => {
    const cwd = tempDir('flotilla-doctor-runtimes-');
    const home = testHome();
    // Made first: a person who sets TMUX_TMPDIR has that folder (tmux makes only tmux-<uid> in it); the probe's
    // servers must run there and leave nothing.
    const tmux = tempDir('flotilla-doctor-tmux-');
    made.push(cwd, home, tmux);
    // tmux's default folder, where the probe's servers ran while the kill went to TMUX_TMPDIR.
    const elsewhere = join('/tmp', `tmux-${process.getuid!()}`);
    const probes = () =>
      new Set(existsSync(elsewhere) ? readdirSync(elsewhere).filter((n) => /^flotilla-probe-/.test(n)) : []);
    const before = probes();
    const listing = () =>
      readdirSync(home.dir, { recursive: true, encoding: 'utf8' }).filter((p) => !p.startsWith('.cache'));
    const bins = {
      FLOTILLA_CLAUDE_BIN: pinnedRuntimeBinary('claude'),
      FLOTILLA_CODEX_BIN: pinnedRuntimeBinary('codex'),
      FLOTILLA_GEMINI_BIN: pinnedRuntimeBinary('gemini'),
    };
    const r = await flotilla(['doctor', '--runtimes'], {
      cwd: cwd.dir,
      env: { ...bins, HOME: home.dir, TMUX_TMPDIR: tmux.dir },
    });
    expect(String(r.stdout).split('\n').filter(Boolean)).toEqual([
      `ok    runtime claude modes: reach the model: plan, default, accept_edits, dont_ask, bypass_permissions (${bins.FLOTILLA_CLAUDE_BIN})`,
      `ok    runtime codex modes: reach the model: plan, default, accept_edits, dont_ask, bypass_permissions (${bins.FLOTILLA_CODEX_BIN})`,
      `ok    runtime gemini modes: reach the model: plan, default, accept_edits, dont_ask, bypass_permissions (${bins.FLOTILLA_GEMINI_BIN})`,
    ]);
    expect(r.exitCode).toBe(0);
    expect(readdirSync(join(tmux.dir, `tmux-${process.getuid!()}`))).toEqual([]);
    expect([...probes()].filter((n) => !before.has(n))).toEqual([]);
    expect(listing()).toEqual([]);
  });
});
