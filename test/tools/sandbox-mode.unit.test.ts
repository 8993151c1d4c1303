import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { effectiveSandbox, probeSandboxSoon } from '../../src/tools/sandbox-mode.js';
import { bubblewrapNests, bubblewrapUserNamespace } from '../../src/tools/sandbox.js';

/**
 * docs/security.md, the OS sandbox: `security.sandbox: bubblewrap` on a machine without bwrap
 * is a refusal in one line saying what to do (the harness's start throws it, so no agent runs
 * unsandboxed), while `auto` there falls back to none and says why.
 */
describe('security.sandbox without bwrap on PATH', () => {
  const noBwrap = { PATH: '/nonexistent' };

  it('bubblewrap refuses, saying how to install it or turn the sandbox off', () => {
    expect(() => effectiveSandbox({ security: { sandbox: 'bubblewrap' } } as never, noBwrap)).toThrow(
      "security.sandbox is 'bubblewrap' but bwrap is not installed — install bubblewrap (apt-get install bubblewrap) or set security.sandbox: none",
    );
  });

  it("auto runs without one and says why; none is the person's choice", () => {
    expect(effectiveSandbox({ security: { sandbox: 'auto' } } as never, noBwrap)).toEqual({
      kind: 'none',
      chosen: false,
      why: 'bwrap is not installed',
    });
    expect(effectiveSandbox({ security: { sandbox: 'none' } } as never, noBwrap)).toMatchObject({
      kind: 'none',
      chosen: true,
    });
  });
});

/**
 * A vendor agent's harness asks bwrap its questions ahead, beside its own start (probeSandboxSoon, §14): the sandbox
 * its CLI then gets is the one the questions asked in turn would give, and they are not asked again.
 */
describe('the sandbox probed ahead', () => {
  const dirs: string[] = [];
  afterEach(() => {
    for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
  });
  /** A bwrap on PATH that logs each call and answers every probe with `code`. */
  function fakeBwrap(code: number): { env: NodeJS.ProcessEnv; bwrap: string; calls: () => string[] } {
    const dir = mkdtempSync(join(tmpdir(), 'flotilla-probe-'));
    dirs.push(dir);
    const bwrap = join(dir, 'bwrap');
    writeFileSync(bwrap, `#!/bin/sh\necho "$*" >> "${dir}/calls"\nexit ${code}\n`, { mode: 0o755 });
    const calls = () =>
      existsSync(join(dir, 'calls')) ? readFileSync(join(dir, 'calls'), 'utf8').trim().split('\n') : [];
    return { env: { PATH: `${dir}:/usr/bin:/bin` }, bwrap, calls };
  }
  const auto = { security: { sandbox: 'auto' } } as never;

  it.each([
    [0, 'bubblewrap'],
    [1, 'none'],
  ])('a bwrap answering %i: the same sandbox as asked in turn, and no question asked twice', async (code, kind) => {
    const ahead = fakeBwrap(code);
    // With Codex's own sandbox inside Flotilla's to ask about too.
    await probeSandboxSoon(auto, ahead.env, true);
    const asked = ahead.calls();
    expect(asked.length).toBeGreaterThan(0);
    const inTurn = fakeBwrap(code);
    const expected = effectiveSandbox(auto, inTurn.env);
    expect(expected.kind).toBe(kind);
    const got = effectiveSandbox(auto, ahead.env);
    expect(JSON.stringify(got).replaceAll(ahead.bwrap, 'BWRAP')).toBe(
      JSON.stringify(expected).replaceAll(inTurn.bwrap, 'BWRAP'),
    );
    expect(bubblewrapUserNamespace(ahead.bwrap)).toBe(bubblewrapUserNamespace(inTurn.bwrap));
    expect(bubblewrapNests(ahead.bwrap)).toBe(bubblewrapNests(inTurn.bwrap));
    expect(ahead.calls()).toEqual(asked);
  });
});

/**
 * bwrap is looked for in PATH's folders by the process itself, not by a sh of its own (§14): it finds the one
 * `command -v bwrap` finds, stepping over a folder named bwrap and a file that cannot run.
 */
describe('bwrap found on PATH', () => {
  it('is the bwrap sh finds, and the sandbox runs that one', async () => {
    const top = mkdtempSync(join(tmpdir(), 'flotilla-path-'));
    try {
      mkdirSync(join(top, 'a', 'bwrap'), { recursive: true });
      mkdirSync(join(top, 'b'));
      writeFileSync(join(top, 'b', 'bwrap'), '#!/bin/sh\nexit 0\n', { mode: 0o644 });
      mkdirSync(join(top, 'c'));
      writeFileSync(join(top, 'c', 'bwrap'), '#!/bin/sh\nexit 0\n', { mode: 0o755 });
      const env = { PATH: ['a', 'b', 'c'].map((d) => join(top, d)).join(':') + ':/usr/bin:/bin' };
      const bySh = execFileSync('sh', ['-c', 'command -v bwrap'], { env, encoding: 'utf8' }).trim();
      expect(bySh).toBe(join(top, 'c', 'bwrap'));
      expect(effectiveSandbox({ security: { sandbox: 'bubblewrap' } } as never, env)).toEqual({
        kind: 'bubblewrap',
        bwrap: bySh,
      });
      // The probes ahead ask that one too (it answers yes to each).
      await probeSandboxSoon({ security: { sandbox: 'auto' } } as never, env);
      expect(effectiveSandbox({ security: { sandbox: 'auto' } } as never, env)).toEqual({
        kind: 'bubblewrap',
        bwrap: bySh,
      });
    } finally {
      rmSync(top, { recursive: true, force: true });
    }
  });
});
