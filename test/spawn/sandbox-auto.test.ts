import { existsSync, readdirSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { tempDir } from '../helpers/fleet.js';
import { spawnFleet, type SpawnFleet } from './helpers.js';

/**
 * docs/security-shell.md "security.sandbox: auto": agents' commands run under bubblewrap where it
 * works; on a machine without bwrap they run unsandboxed and the person's spawn says so in
 * one line.
 */
let f: SpawnFleet | undefined;
const cleanups: (() => void)[] = [];
afterEach(async () => {
  await f?.close();
  f = undefined;
  for (const c of cleanups.splice(0)) c();
});

/** A PATH holding every command of /usr/bin and /bin but bwrap: a machine without it. */
function pathWithoutBwrap(): string {
  const bin = tempDir('flotilla-bin-');
  cleanups.push(bin.cleanup);
  for (const dir of ['/usr/bin', '/bin']) {
    if (!existsSync(dir)) continue;
    for (const name of readdirSync(dir))
      if (name !== 'bwrap' && !existsSync(join(bin.dir, name))) symlinkSync(join(dir, name), join(bin.dir, name));
  }
  return bin.dir;
}

// Inside the sandbox the fleet root is read-only; without it the command writes there.
const PROBE = 'if touch .flotilla/probe 2>/dev/null; then echo fleet-root-writable; else echo fleet-root-read-only; fi';

describe('security.sandbox: auto', { timeout: 300_000 }, () => {
  it('runs commands under bubblewrap where it works, with no warning', async () => {
    f = spawnFleet({ config: 'security:\n  sandbox: auto\n', definitions: { prober: 'run-prompt.yaml' } });
    const r = await f.spawnAgent(['--wait', '--agent', 'prober', PROBE]);
    expect(r.exitCode).toBe(0);
    expect(r.stdout).toContain('fleet-root-read-only');
    expect(existsSync(join(f.layout.root, 'probe'))).toBe(false);
    expect(r.stderr).not.toContain('no sandbox');
  });

  it('without bwrap runs them unsandboxed and the spawn says so in one line', async () => {
    f = spawnFleet({ config: 'security:\n  sandbox: auto\n', definitions: { prober: 'run-prompt.yaml' } });
    const r = await f.spawnAgent(['--wait', '--agent', 'prober', PROBE], { PATH: pathWithoutBwrap() });
    expect(r.exitCode).toBe(0);
    expect(r.stdout).toContain('fleet-root-writable');
    const warnings = r.stderr.split('\n').filter((l) => l.includes('no sandbox'));
    expect(warnings).toEqual([
      "flotilla: no sandbox (security.sandbox: auto, but bwrap is not installed) — agents' commands run as you, with your files and network; install bubblewrap (apt-get install bubblewrap), or set security.sandbox: none to say so",
    ]);
  });
});
