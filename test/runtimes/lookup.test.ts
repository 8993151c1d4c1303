import { chmodSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { pathWithout, VENDOR_CLIS } from '../helpers/path.js';
import { eventually } from '../helpers/tmux.js';
import { spawnFleet, type SpawnFleet } from '../spawn/helpers.js';

/**
 * Which CLI a vendor agent runs (docs/runtimes.md, "Which CLI runs"): runtimes.<name>.command,
 * then PATH, then the project's node_modules/.bin, then the CLIs installed beside Flotilla —
 * and `flotilla doctor` prints the path and version a spawn would use.
 */
let f: SpawnFleet | undefined;
const noCli = pathWithout(VENDOR_CLIS);
afterAll(() => noCli.cleanup());
afterEach(async () => {
  await f?.close();
  f = undefined;
});

function fakeCli(path: string, version: string): void {
  mkdirSync(join(path, '..'), { recursive: true });
  writeFileSync(path, `#!/bin/sh\necho "${version}"\n`);
  chmodSync(path, 0o755);
}

describe('vendor CLI lookup', { timeout: 300_000 }, () => {
  it('doctor prints, per runtime, the path and version from the config, the project and beside Flotilla', async () => {
    f = spawnFleet();
    const mine = join(f.project, 'tools', 'my-codex');
    fakeCli(mine, 'codex-cli 0.170.0');
    fakeCli(join(f.project, 'node_modules', '.bin', 'gemini'), '0.62.0');
    writeFileSync(
      f.layout.configFile,
      `agents:\n  default_permission_mode: dont_ask\nruntimes:\n  codex:\n    command: ${mine}\n`,
    );
    // PATH without any vendor CLI: the project's and Flotilla's own node_modules are what is left.
    const r = await f.flotilla(['doctor'], { PATH: noCli.path });
    const line = (name: string) => r.stdout.split('\n').find((l) => l.includes(`runtime ${name}:`)) ?? '';
    expect(line('codex')).toContain(`Codex codex-cli 0.170.0 at ${mine} (via config runtimes.codex.command)`);
    expect(line('gemini')).toContain(
      `Gemini CLI 0.62.0 at ${join(f.project, 'node_modules', '.bin', 'gemini')} (via the trusted project's node_modules/.bin)`,
    );
    expect(line('claude')).toMatch(
      /Claude Code 2\.1\.197 \(Claude Code\) at \S+\/node_modules\/\.bin\/claude \(via beside Flotilla\)/,
    );
  });

  it("doctor asks each pinned CLI its version without writing into the person's home", async () => {
    f = spawnFleet();
    const home = f.env.HOME!;
    const listing = () =>
      readdirSync(home, { recursive: true, encoding: 'utf8' })
        .filter((p) => !p.startsWith(join('.cache', 'flotilla')))
        .sort();
    const before = listing();
    // The real CLIs, as npm ci pins them: Codex made ~/.codex/tmp/ and Gemini ~/.gemini/ to print a version.
    const r = await f.flotilla(['doctor']);
    expect(r.stdout).toMatch(/runtime codex: Codex codex-cli 0\.169\.0 at /);
    expect(r.stdout).toMatch(/runtime gemini: Gemini CLI 0\.61\.0 at /);
    expect(listing()).toEqual(before);
  });

  it('a configured command that is not executable refuses the spawn and names the setting', async () => {
    f = spawnFleet({ config: 'runtimes:\n  claude:\n    command: /nonexistent/claude\n' });
    const r = await f.spawnAgent(['--runtime', 'claude', '--id', 'c', 'do it'], { ANTHROPIC_API_KEY: 'k' });
    expect(r.exitCode).toBe(1);
    expect(r.stderr).toContain(
      'spawn refused: Claude Code is not installed — runtimes.claude.command (/nonexistent/claude) is not an executable file — fix the path',
    );
    expect(f.records()).toEqual([]);
  });

  it('a variable naming a CLI that is not there refuses the spawn and names the variable', async () => {
    f = spawnFleet();
    const r = await f.spawnAgent(['--runtime', 'codex', '--id', 'c', 'do it'], {
      OPENAI_API_KEY: 'k',
      FLOTILLA_CODEX_BIN: '/nonexistent/codex',
    });
    expect(r.exitCode).toBe(1);
    expect(r.stderr).toContain(
      'spawn refused: Codex is not installed — FLOTILLA_CODEX_BIN (/nonexistent/codex) is not an executable file — fix the path, or unset it and npm install -g @openai/codex',
    );
    expect(f.records()).toEqual([]);
  });

  it('a CLI found only beside Flotilla is the one a spawn runs', async () => {
    f = spawnFleet();
    const r = await f.spawnAgent(['--runtime', 'codex', '--id', 'beside', 'do it'], {
      PATH: noCli.path,
      OPENAI_API_KEY: 'k',
      OPENAI_BASE_URL: 'http://127.0.0.1:9/v1',
    });
    expect(r.exitCode).toBe(0);
    expect(f.record('beside')).toMatchObject({ runtime: 'codex' });
    const started = () => {
      try {
        return readFileSync(f!.layout.log('beside'), 'utf8');
      } catch {
        return '';
      }
    };
    await eventually(() => started().includes('vendor CLI started'), 120_000, 'the CLI to start');
    expect(started()).toMatch(/"bin":"[^"]*\/node_modules\/\.bin\/codex"/);
  });
});
