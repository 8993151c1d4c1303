import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { PERMISSION_MODES } from '../../src/policy/permission-mode.js';
import { HIDDEN_PATHS_CONFIG, printingProbe, secretsIn, seedCredentials } from '../helpers/credentials.js';
import { eventually } from '../helpers/tmux.js';
import { completionsFrom } from '../spawn/helpers.js';
import { TARGETS } from './targets.js';
import { vendorFleets } from './vendor-suite.js';

/** How many pid namespaces a process is seen from (`NSpid:` in its status): 1 on the host's own. */
function nsPids(pid: number): number {
  return (/^NSpid:\s*(.+)$/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? '').trim().split(/\s+/).length;
}
const fleets = vendorFleets();

/**
 * Codex is contained in every mode (docs/security-fleet.md, "Vendor runtimes"): in `plan`,
 * `default` and `accept_edits` its own bubblewrap runs each command inside Flotilla's, in
 * `dont_ask` and `bypass_permissions` the commands run in Flotilla's directly. In each mode
 * its model (the fake vendor API replaying credentials-print.yaml) has its shell tool print
 * every credential of the person's home; none of them reaches the model — only the ordinary
 * `~/notes.txt` and Codex's own login folder, which it alone may see — and Codex still
 * reaches its model. The mode's own meaning holds meanwhile: `plan` offers no shell,
 * `default` cannot write the project, the others can.
 */
describe("Codex's shell tool reads no credential, in every mode", { timeout: 600_000 }, () => {
  it.each(PERMISSION_MODES)('%s', async (mode) => {
    const t = TARGETS.codex();
    const f = await fleets.open({
      ...t,
      script: 'credentials-print.yaml',
      definitions: { a: `permissions:\n  permission_mode: ${mode}\n` },
      parentMode: mode === 'bypass_permissions' ? 'bypass_permissions' : 'dont_ask',
    });
    // The person's credentials (what must not be read) and their own config's hidden_paths.
    seedCredentials(f.home, f.project);
    printingProbe(f.home, f.project);
    writeFileSync(join(f.env.XDG_CONFIG_HOME!, 'flotilla', 'config.yaml'), HIDDEN_PATHS_CONFIG);
    // The person's allowance, without which a bypass definition does not load.
    if (mode === 'bypass_permissions')
      writeFileSync(
        f.layout.configFile,
        readFileSync(f.layout.configFile, 'utf8').replace('agents:\n', 'agents:\n  allow_bypass_permissions: true\n'),
      );
    const id = await f.spawnChild('a', `codex-creds-${mode.replace('_', '-')}`, 'print the home', t.spawnArgs);
    await eventually(() => completionsFrom(f, 'lead-parent', id).length === 1, 300_000, 'the completion');

    // The CLI itself runs in a pid namespace of its own: Flotilla's sandbox.
    const cli = f.cliPid(id);
    expect(cli).toBeDefined();
    expect(nsPids(cli!)).toBeGreaterThan(1);
    // Codex's own login (its key) reached the model on every request.
    expect(f.vendor.auth.length).toBeGreaterThanOrEqual(2);
    expect(f.vendor.auth.filter((a) => !a.includes('sk-fake-key-for-a-local-server'))).toEqual([]);
    const received = `${f.vendor.seen()}\n${JSON.stringify(f.vendor.bodies)}`;
    expect(secretsIn(received).filter((n) => n !== 'codex' && n !== 'notes')).toEqual([]);
    if (mode === 'plan') {
      // No shell in plan: the call is refused and nothing ran.
      expect(received).not.toContain('probe-ran');
      expect(existsSync(join(f.project, 'probe-wrote.txt'))).toBe(false);
      return;
    }
    // The probe ran and read the home: the ordinary file came back.
    expect(received).toContain('probe-ran');
    expect(secretsIn(received)).toContain('notes');
    expect(received).toContain(mode === 'default' ? 'probe-write-refused' : 'probe-wrote');
    expect(existsSync(join(f.project, 'probe-wrote.txt'))).toBe(mode !== 'default');
  });
});
