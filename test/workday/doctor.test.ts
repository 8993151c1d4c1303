import { existsSync, readdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { TOOLS_DIR } from '../../src/layout/package.js';
import { runtimeCheck, type RuntimeFacts } from '../../src/cli/commands/doctor-vendor-clis.js';
import { TESTED } from '../../src/versions.js';
import { tempDir } from '../helpers/fleet.js';
import { spawnFleet, type SpawnFleet } from '../spawn/helpers.js';

/**
 * `flotilla doctor` judges the settings, not only the machine: a setting whose tool is
 * missing (security.sandbox: bubblewrap without bwrap, a runtime pointed at a CLI that is
 * not there) is a WARN with what to do, never `ok` (docs/decisions.md "doctor judges the settings").
 */
let f: SpawnFleet | undefined;
const cleanups: (() => void)[] = [];
afterEach(async () => {
  await f?.close();
  f = undefined;
  for (const c of cleanups.splice(0)) c();
});

/** A PATH holding every command of /usr/bin and /bin but `left`: a machine without that tool. */
function pathWithout(left: string): string {
  const bin = tempDir('flotilla-bin-');
  cleanups.push(bin.cleanup);
  for (const dir of ['/usr/bin', '/bin']) {
    if (!existsSync(dir)) continue;
    for (const name of readdirSync(dir)) {
      if (name === left || existsSync(join(bin.dir, name))) continue;
      symlinkSync(join(dir, name), join(bin.dir, name));
    }
  }
  return bin.dir;
}

const line = (out: string, name: string): string => out.split('\n').find((l) => l.includes(` ${name}:`)) ?? '';

describe('flotilla doctor and the settings', { timeout: 300_000 }, () => {
  it('WARNs, and says what to do, when security.sandbox is bubblewrap and bwrap is not on PATH', async () => {
    f = spawnFleet({ config: 'security:\n  sandbox: bubblewrap\n' });
    const PATH = pathWithout('bwrap');
    const r = await f.flotilla(['doctor'], { PATH });
    const sandbox = line(r.stdout, 'sandbox (security.sandbox: bubblewrap)');
    expect(sandbox).toMatch(/^WARN {2}sandbox/);
    expect(sandbox).toContain('bwrap not found, but security.sandbox is bubblewrap');
    expect(sandbox).toContain('— install bubblewrap');
    expect(sandbox).toContain('or set security.sandbox: none');
  });

  it('names the effective sandbox of auto, and WARNs when it is none while agents run commands without asking', async () => {
    f = spawnFleet({ config: 'security:\n  sandbox: auto\n' });
    const PATH = pathWithout('bwrap');
    // The spawn fleet's default mode is dont_ask: no bwrap here means commands run as the person, unasked.
    const auto = line((await f.flotilla(['doctor'], { PATH })).stdout, 'sandbox (security.sandbox: auto)');
    expect(auto).toBe(
      'WARN  sandbox (security.sandbox: auto): effective: none (bwrap is not installed) while agents.default_permission_mode dont_ask runs commands without asking' +
        ' — they run as you, with your files, keys and network — install bubblewrap (apt-get install bubblewrap) and allow user namespaces, or lower that permission mode to default',
    );
    // none chosen outright warns just the same; a definition in dont_ask is named like the default.
    writeFileSync(f.layout.configFile, 'security:\n  sandbox: none\n');
    writeFileSync(
      join(f.layout.agentsDir, 'free.md'),
      '---\nname: free\ndescription: runs freely\npermission_mode: dont_ask\n---\nYou run.\n',
    );
    expect(line((await f.flotilla(['doctor'], { PATH })).stdout, 'sandbox (security.sandbox: none)')).toMatch(
      /^WARN {2}sandbox \(security\.sandbox: none\): effective: none \(security\.sandbox: none\) while definition 'free' \(dont_ask\) runs commands without asking/,
    );
    // Nothing runs unasked: no warning, the effective value named.
    writeFileSync(join(f.layout.agentsDir, 'free.md'), '---\nname: free\ndescription: asks\n---\nYou ask.\n');
    expect(line((await f.flotilla(['doctor'], { PATH })).stdout, 'sandbox (security.sandbox: none)')).toBe(
      'ok    sandbox (security.sandbox: none): effective: none (security.sandbox: none)',
    );
    // Where bwrap works, auto is bubblewrap.
    writeFileSync(f.layout.configFile, 'agents:\n  default_permission_mode: dont_ask\nsecurity:\n  sandbox: auto\n');
    expect(line((await f.flotilla(['doctor'])).stdout, 'sandbox (security.sandbox: auto)')).toMatch(
      /^ok +sandbox \(security\.sandbox: auto\): effective: bubblewrap \(\S*bwrap: user \+ pid namespaces, no capabilities\)$/,
    );
    // A bwrap that cannot start another inside it (stands in for a security module's rule): Codex's sandboxed modes run
    // outside, said so.
    writeFileSync(
      join(PATH, 'bwrap'),
      '#!/bin/sh\ncase "$*" in *--unshare-net*) echo "bwrap: setting up uid map: Operation not permitted" >&2; exit 1;; esac\nexit 0\n',
      { mode: 0o755 },
    );
    expect(line((await f.flotilla(['doctor'], { PATH })).stdout, 'sandbox (security.sandbox: auto)')).toMatch(
      /^WARN {2}sandbox \(security\.sandbox: auto\): effective: bubblewrap \(\S*bwrap: .*\), but a bubblewrap cannot start inside it here: Codex in plan, default and accept_edits runs outside it, .* — allow bwrap a user namespace inside another/,
    );
  });

  it('FAILs the lineage line, saying what to install, on a machine without util-linux unshare', async () => {
    f = spawnFleet();
    const r = await f.flotilla(['doctor'], { PATH: pathWithout('unshare') });
    const lineage = line(r.stdout, 'lineage (pid namespace per command)');
    expect(lineage).toMatch(
      /^FAIL {2}lineage \(pid namespace per command\): unshare --pid --fork --kill-child( --map-current-user)? failed: .*ENOENT/,
    );
    expect(lineage).toContain(
      "UNENFORCED: a command that detaches (setsid, nohup, double fork) can spawn, send and approve outside its agent's lineage",
    );
    expect(lineage).toContain('— use Linux with util-linux (unshare, setpriv)');
    expect(r.exitCode).toBe(1);
  });

  it('FAILs the lineage line when the kernel refuses the namespace', async () => {
    f = spawnFleet();
    // Stands in for a kernel with user namespaces off: an unshare that fails as util-linux's does there.
    const PATH = pathWithout('unshare');
    writeFileSync(
      join(PATH, 'unshare'),
      '#!/bin/sh\necho "unshare: unshare failed: Operation not permitted" >&2\nexit 1\n',
      { mode: 0o755 },
    );
    const r = await f.flotilla(['doctor'], { PATH });
    const lineage = line(r.stdout, 'lineage (pid namespace per command)');
    expect(lineage).toMatch(
      /^FAIL {2}lineage \(pid namespace per command\): unshare --pid --fork --kill-child( --map-current-user)? failed: unshare: unshare failed: Operation not permitted — UNENFORCED/,
    );
    expect(lineage).toContain('user namespaces enabled (sysctl user.max_user_namespaces=15000');
    expect(r.exitCode).toBe(1);
  });

  it('WARNs when runtimes.<name>.command or $FLOTILLA_<NAME>_BIN names a CLI that is not there', async () => {
    f = spawnFleet({ config: 'runtimes:\n  codex:\n    command: /nonexistent/codex\n' });
    const r = await f.flotilla(['doctor'], {
      PATH: `${TOOLS_DIR}:${f.env.PATH}`,
      FLOTILLA_GEMINI_BIN: '/nonexistent/gemini',
    });
    expect(line(r.stdout, 'runtime codex')).toBe(
      'WARN  runtime codex: runtimes.codex.command (/nonexistent/codex) is not an executable file: agents with runtime codex cannot start' +
        ' — fix the path in the config, or set runtimes.codex.command: null to look on PATH',
    );
    expect(line(r.stdout, 'runtime gemini')).toMatch(
      /^WARN {2}runtime gemini: \$FLOTILLA_GEMINI_BIN \(\/nonexistent\/gemini\) is not an executable file/,
    );
    // A WARN is not a failure: doctor exits 0 unless a check failed.
    expect(r.stdout.split('\n').filter((l) => l.startsWith('FAIL'))).toEqual([]);
    expect(r.exitCode).toBe(0);
    // The runtime left alone is found where it always is; with no login in this pristine home, a WARN says so.
    expect(line(r.stdout, 'runtime claude')).toMatch(
      /^WARN {2}runtime claude: Claude Code \S+ .*; login: none — Claude Code has no login here — run `claude` once/,
    );
  });
});

describe('flotilla doctor and the vendor CLI versions', { timeout: 300_000 }, () => {
  it('WARNs on a CLI at another version than the tested one, naming the tested version and how to pin it', async () => {
    f = spawnFleet();
    // A CLI that auto-updated: it answers --version with a newer release than the pinned one.
    const bin = tempDir('flotilla-newer-cli-');
    cleanups.push(bin.cleanup);
    writeFileSync(join(bin.dir, 'claude'), '#!/bin/sh\necho "2.1.300 (Claude Code)"\n', { mode: 0o755 });
    const r = await f.flotilla(['doctor'], { FLOTILLA_CLAUDE_BIN: join(bin.dir, 'claude') });
    const claude = line(r.stdout, 'runtime claude');
    expect(
      claude.startsWith(
        `WARN  runtime claude: Claude Code 2.1.300 (Claude Code) at ${join(bin.dir, 'claude')} (via $FLOTILLA_CLAUDE_BIN); login: `,
      ),
    ).toBe(true);
    expect(claude).toContain(`; Flotilla was tested with ${TESTED.claude} — `);
    expect(
      claude.endsWith(
        `a version it was not tested with may stop an agent at a new prompt; pin the tested one: npm install -g @anthropic-ai/claude-code@${TESTED.claude}`,
      ),
    ).toBe(true);
    // A WARN, not a failure: the CLI may well work.
    expect(r.stdout).not.toMatch(/^FAIL +runtime/m);
  });
});

describe('runtimeCheck', () => {
  const facts: RuntimeFacts = {
    name: 'gemini',
    title: 'Gemini CLI',
    npmPackage: '@google/gemini-cli',
    minimum: '0.61.0',
    tested: '0.62.0',
    found: undefined,
    env: undefined,
    command: undefined,
    wantedBy: [],
  };

  it('a CLI nobody asks for is optional; one a definition names is a WARN naming the definitions', () => {
    expect(runtimeCheck(facts)).toMatchObject({ ok: true, detail: expect.stringContaining('not installed (optional') });
    expect(runtimeCheck(facts).warn).toBeFalsy();
    const wanted = runtimeCheck({ ...facts, wantedBy: ['researcher', 'scout'] });
    expect(wanted).toMatchObject({
      ok: true,
      warn: true,
      detail: 'Gemini CLI not installed, but definitions researcher, scout ask for it',
    });
    expect(wanted.fix).toBe('npm install -g @google/gemini-cli, or set runtimes.gemini.command to its path');
  });

  it('a found CLI older than the minimum fails; another than the tested one WARNs how to pin it; the tested one or an unreadable version is ok', () => {
    const found = (version: string | undefined): RuntimeFacts => ({
      ...facts,
      found: { path: '/x/gemini', via: 'PATH', version, login: 'shared' },
    });
    expect(runtimeCheck(found('0.60.9'))).toMatchObject({
      ok: false,
      fix: 'upgrade it to 0.61.0 or newer: npm install -g @google/gemini-cli@0.62.0',
    });
    expect(runtimeCheck(found('0.62.0'))).toEqual({
      name: 'runtime gemini',
      ok: true,
      detail: 'Gemini CLI 0.62.0 at /x/gemini (via PATH); login: shared',
      fix: '',
    });
    expect(runtimeCheck(found('0.63.1'))).toEqual({
      name: 'runtime gemini',
      ok: true,
      warn: true,
      detail: 'Gemini CLI 0.63.1 at /x/gemini (via PATH); login: shared; Flotilla was tested with 0.62.0',
      fix: 'a version it was not tested with may stop an agent at a new prompt; pin the tested one: npm install -g @google/gemini-cli@0.62.0',
    });
    expect(runtimeCheck(found('0.61.5')).warn).toBe(true);
    expect(runtimeCheck(found(undefined))).toMatchObject({ ok: true, fix: '' });
  });

  it('WARNs a CLI with no login an agent could use, saying how to give it one, beside a version WARN', () => {
    const loginFix = 'set GEMINI_API_KEY, or run gemini once and log in';
    const found = (version: string): RuntimeFacts => ({
      ...facts,
      found: { path: '/x/gemini', via: 'PATH', version, login: 'none', loginFix },
    });
    expect(runtimeCheck(found('0.62.0'))).toEqual({
      name: 'runtime gemini',
      ok: true,
      warn: true,
      detail: 'Gemini CLI 0.62.0 at /x/gemini (via PATH); login: none',
      fix: loginFix,
    });
    expect(runtimeCheck(found('0.63.1')).fix).toBe(
      `${loginFix}; a version it was not tested with may stop an agent at a new prompt; pin the tested one: npm install -g @google/gemini-cli@0.62.0`,
    );
  });

  it('names a CLI inside the untrusted project that was passed over, found elsewhere or not at all', () => {
    const skipped = ['/p/node_modules/.bin/gemini'];
    const elsewhere = runtimeCheck({
      ...facts,
      skipped,
      found: { path: '/x/gemini', via: 'PATH', version: '0.62.0', login: 'shared' },
    });
    expect(elsewhere).toMatchObject({
      ok: true,
      warn: true,
      detail:
        'Gemini CLI 0.62.0 at /x/gemini (via PATH); login: shared; skipped /p/node_modules/.bin/gemini (inside this untrusted folder)',
    });
    expect(elsewhere.fix).toContain("'flotilla trust'");
    const nowhere = runtimeCheck({ ...facts, skipped });
    expect(nowhere).toMatchObject({
      ok: true,
      warn: true,
      detail:
        'Gemini CLI not installed outside this folder; skipped /p/node_modules/.bin/gemini (inside this untrusted folder): agents with runtime gemini cannot start',
    });
  });
});
