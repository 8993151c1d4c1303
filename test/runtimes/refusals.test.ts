import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { listRecords } from '../../src/fleet/registry.js';
import { spawnFleet, type SpawnFleet } from '../spawn/helpers.js';

/**
 * A runtime whose CLI the spawner cannot find is refused at spawn (§13), before any record, window or
 * slot exists: one line that says what to do, the bracketed refusal, an audit line.
 */

let f: SpawnFleet | undefined;
afterEach(async () => {
  await f?.close();
  f = undefined;
});

function refusalsIn(fleet: SpawnFleet): Record<string, unknown>[] {
  try {
    return readFileSync(fleet.layout.auditFile, 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as Record<string, unknown>)
      .filter((l) => l.event === 'spawn_refused');
  } catch {
    return [];
  }
}

describe('spawn on a runtime that cannot run here', { timeout: 300_000 }, () => {
  it('a definition with runtime: gemini whose CLI is missing is refused the same way; nothing is registered', async () => {
    f = spawnFleet();
    writeFileSync(
      join(f.layout.agentsDir, 'gem.md'),
      '---\nname: gem\ndescription: gemini agent\nruntime: gemini\n---\nYou are gem.\n',
    );
    const r = await f.spawnAgent(['--agent', 'gem', 'do it'], {
      FLOTILLA_GEMINI_BIN: join(f.project, 'no-such-gemini'),
    });
    expect(r.exitCode).not.toBe(0);
    expect(r.stderr).toContain('spawn refused: Gemini CLI is not installed');
    expect(listRecords(f.layout)).toEqual([]);
    expect(refusalsIn(f)).toContainEqual(expect.objectContaining({ code: 'runtime-missing' }));
  });

  it.each([
    ['claude', 'Claude Code', '@anthropic-ai/claude-code', 'FLOTILLA_CLAUDE_BIN'],
    ['codex', 'Codex', '@openai/codex', 'FLOTILLA_CODEX_BIN'],
    ['gemini', 'Gemini CLI', '@google/gemini-cli', 'FLOTILLA_GEMINI_BIN'],
  ])('--runtime %s without its CLI installed is refused with how to install it', async (name, title, pkg, binEnv) => {
    f = spawnFleet();
    const r = await f.spawnAgent(['--runtime', name, '--id', `no-${name}`, 'do it'], {
      [binEnv]: join(f.project, `no-such-${name}`),
    });
    expect(r.exitCode).not.toBe(0);
    // The variable stands in for a missing install here (the CLIs beside Flotilla would be found): it is named.
    expect(r.stderr).toContain(
      `spawn refused: ${title} is not installed — ${binEnv} (${join(f.project, `no-such-${name}`)}) is not an executable file — fix the path, or unset it and npm install -g ${pkg}`,
    );
    expect(listRecords(f.layout)).toEqual([]);
  });
});

describe('spawn on a runtime that could not authenticate', { timeout: 300_000 }, () => {
  it.each([
    ['claude', 'Claude Code has no login here — run `claude` once in a terminal and /login, or set ANTHROPIC_API_KEY'],
    ['codex', 'Codex has no login here — run `codex login` once in a terminal, or set OPENAI_API_KEY'],
    [
      'gemini',
      'Gemini CLI has no login here — run `gemini` once in a terminal and sign in with Google, or set GEMINI_API_KEY',
    ],
  ])(
    '--runtime %s with no key and no login of the person is refused up front, in one line naming the fix',
    async (name, fix) => {
      f = spawnFleet();
      const home = mkdtempSync(join(f.project, 'home-'));
      const r = await f.spawnAgent(['--runtime', name, '--id', `nologin-${name}`, 'do it'], { HOME: home });
      expect(r.exitCode).toBe(1);
      expect(r.stderr.split('\n')[0]).toBe(`flotilla: spawn refused: ${fix}`);
      expect(listRecords(f.layout)).toEqual([]);
      expect(await f.windows()).not.toContain(`nologin-${name}`);
      expect(refusalsIn(f)).toContainEqual(expect.objectContaining({ code: 'runtime-login' }));
    },
  );

  it("login: isolated ignores the person's login file and says so", async () => {
    f = spawnFleet({ config: 'runtimes:\n  codex:\n    login: isolated\n' });
    const home = mkdtempSync(join(f.project, 'home-'));
    // The person's login file: what an isolated login must not use.
    mkdirSync(join(home, '.codex'));
    writeFileSync(join(home, '.codex', 'auth.json'), '{"OPENAI_API_KEY":"sk-person"}');
    const r = await f.spawnAgent(['--runtime', 'codex', '--id', 'iso', 'do it'], { HOME: home });
    expect(r.exitCode).toBe(1);
    expect(r.stderr).toContain(
      'spawn refused: Codex has no key here — set OPENAI_API_KEY (runtimes.codex.login is isolated: set the key, or set it to shared)',
    );
    expect(listRecords(f.layout)).toEqual([]);
  });
});
