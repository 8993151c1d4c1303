import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { pathWithout, VENDOR_CLIS } from '../helpers/path.js';
import { eventually } from '../helpers/tmux.js';
import { spawnFleet, type SpawnFleet } from '../spawn/helpers.js';

/**
 * A cloned repository does not pick the program a vendor agent runs (docs/security.md
 * "Folder trust"): its `.flotilla/config.yaml` names `runtimes.claude.command: ./evil.sh` and it
 * commits `node_modules/.bin/claude`. Untrusted, `spawn-agent --runtime claude` runs neither
 * (the Claude Code installed beside Flotilla runs) and says what it passed over; once the
 * person trusts the folder, its command is the one that runs.
 */
let f: SpawnFleet | undefined;
const cleanups: (() => void)[] = [];
afterEach(async () => {
  await f?.close();
  f = undefined;
  for (const c of cleanups.splice(0)) c();
});

function pathWithoutClis(): string {
  const p = pathWithout(VENDOR_CLIS);
  cleanups.push(p.cleanup);
  return p.path;
}

/** A script that leaves `marker` behind if anything ever runs it. */
function evil(path: string, marker: string): void {
  mkdirSync(join(path, '..'), { recursive: true });
  writeFileSync(path, `#!/bin/sh\ntouch '${marker}'\necho "2.1.197 (Claude Code)"\n`);
  chmodSync(path, 0o755);
}

// The key and base URL only let the spawn pass its login check; the CLI's requests go nowhere.
const KEYS = { ANTHROPIC_API_KEY: 'k', ANTHROPIC_BASE_URL: 'http://127.0.0.1:9' };

describe('an untrusted clone that names its own Claude Code', { timeout: 300_000 }, () => {
  it('runs neither its configured command nor its node_modules/.bin/claude until trusted', async () => {
    f = spawnFleet({ config: 'runtimes:\n  claude:\n    command: ./evil.sh\n' });
    // No claude on PATH: the project's and Flotilla's own node_modules/.bin are what is left.
    const ENV = { ...KEYS, PATH: pathWithoutClis() };
    const fromConfig = join(f.project, 'config-command.ran');
    const fromBin = join(f.project, 'node-modules-bin.ran');
    evil(join(f.project, 'evil.sh'), fromConfig);
    const committed = join(f.project, 'node_modules', '.bin', 'claude');
    evil(committed, fromBin);
    // The helper trusts its fleets; this one is a stranger's clone.
    expect((await f.flotilla(['trust', '--revoke'])).exitCode).toBe(0);

    const doctor = await f.flotilla(['doctor'], ENV);
    const claudeLine = doctor.stdout.split('\n').find((l) => l.includes('runtime claude:')) ?? '';
    expect(claudeLine).toMatch(/at \S+\/node_modules\/\.bin\/claude \(via beside Flotilla\)/);
    expect(claudeLine).toContain(`skipped ${committed} (inside this untrusted folder)`);

    const r = await f.spawnAgent(['--runtime', 'claude', '--id', 'c1', 'summarize'], ENV);
    expect(r.exitCode).toBe(0);
    // The one line a person sees: the command and the committed CLI were passed over.
    expect(r.stderr).toContain('this folder is not trusted, so these were ignored:');
    expect(r.stderr).toContain(`runtimes.claude.command in ${f.layout.configFile}`);
    expect(r.stderr).toContain(`${committed} (a Claude Code CLI inside this folder; not run)`);
    const log = () => {
      try {
        return readFileSync(f!.layout.log('c1'), 'utf8');
      } catch {
        return '';
      }
    };
    await eventually(() => log().includes('vendor CLI started'), 120_000, 'the CLI to start');
    const bin = /"bin":"([^"]*)"/.exec(
      log()
        .split('\n')
        .find((l) => l.includes('vendor CLI started')) ?? '',
    )?.[1];
    expect(bin).toMatch(/\/node_modules\/\.bin\/claude$/);
    expect(bin!.startsWith(f.project)).toBe(false);
    expect(existsSync(fromConfig)).toBe(false);
    expect(existsSync(fromBin)).toBe(false);
    await f.flotilla(['cancel', 'c1']);

    // Trusted: the folder's own command is what its person chose to run.
    expect((await f.flotilla(['trust'])).exitCode).toBe(0);
    const trustedDoctor = await f.flotilla(['doctor'], ENV);
    expect(trustedDoctor.stdout).toContain('(via config runtimes.claude.command)');
    const t = await f.spawnAgent(['--runtime', 'claude', '--id', 'c2', 'summarize'], ENV);
    expect(t.exitCode).toBe(0);
    await eventually(() => existsSync(fromConfig), 60_000, 'the trusted command to run');
    expect(existsSync(fromBin)).toBe(false);
  });
});
