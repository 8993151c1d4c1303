import { chmodSync, mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { lookupRuntimeBinary, packagedVersion } from '../../src/runtimes/binary.js';
import { TESTED } from '../../src/versions.js';
import { pinnedRuntimeBinary } from './helpers.js';
import { tempDir } from '../helpers/fleet.js';

/**
 * The vendor CLI lookup never runs a program inside a project its person has not trusted
 * (docs/security-trust.md "Folder trust"): not its node_modules/.bin, not a PATH entry inside it,
 * not a link elsewhere that points into it. Once trusted, each counts. A made-up CLI name, so
 * nothing installed on this machine answers.
 */
const runtime = { binary: 'flotilla-lookup-test-cli', binEnv: 'FLOTILLA_LOOKUP_TEST_BIN' };
const cleanups: (() => void)[] = [];
afterEach(() => {
  for (const c of cleanups.splice(0)) c();
});

function dir(): string {
  const d = tempDir('flotilla-lookup-');
  cleanups.push(d.cleanup);
  return d.dir;
}

function cli(path: string): string {
  mkdirSync(join(path, '..'), { recursive: true });
  writeFileSync(path, '#!/bin/sh\necho evil\n');
  chmodSync(path, 0o755);
  return path;
}

describe('lookupRuntimeBinary in an untrusted project', () => {
  it("skips the project's node_modules/.bin and runs it once trusted", () => {
    const project = dir();
    const committed = cli(join(project, 'node_modules', '.bin', runtime.binary));
    const env = { PATH: '/usr/bin:/bin' };
    expect(lookupRuntimeBinary(runtime, env, { project })).toEqual({ found: undefined, skipped: [committed] });
    expect(lookupRuntimeBinary(runtime, env, { project, projectTrusted: true })).toEqual({
      found: { path: committed, via: 'project' },
      skipped: [],
    });
  });

  it('skips a PATH entry inside the project, relative ones included, and takes the next one outside', () => {
    const project = dir();
    const outside = dir();
    const inProject = cli(join(project, 'bin', runtime.binary));
    const mine = cli(join(outside, runtime.binary));
    const env = { PATH: `${join(project, 'bin')}:${outside}` };
    expect(lookupRuntimeBinary(runtime, env, { project })).toEqual({
      found: { path: mine, via: 'PATH' },
      skipped: [inProject],
    });
    expect(lookupRuntimeBinary(runtime, env, { project, projectTrusted: true }).found).toEqual({
      path: inProject,
      via: 'PATH',
    });
    const cwd = process.cwd();
    try {
      process.chdir(project);
      const relative = lookupRuntimeBinary(runtime, { PATH: 'bin' }, { project });
      expect(relative).toEqual({ found: undefined, skipped: [join('bin', runtime.binary)] });
    } finally {
      process.chdir(cwd);
    }
  });

  it('skips a link outside the project that points into it', () => {
    const project = dir();
    const outside = dir();
    const target = cli(join(project, 'node_modules', '.bin', runtime.binary));
    symlinkSync(target, join(outside, runtime.binary));
    const found = lookupRuntimeBinary(runtime, { PATH: outside }, { project });
    expect(found.found).toBeUndefined();
    expect(found.skipped).toEqual([join(outside, runtime.binary), target]);
  });

  it("takes the person's own variable and config command as given", () => {
    const project = dir();
    const named = cli(join(project, 'tools', runtime.binary));
    expect(lookupRuntimeBinary(runtime, { PATH: '', [runtime.binEnv]: named }, { project }).found).toEqual({
      path: named,
      via: 'env',
    });
    expect(lookupRuntimeBinary(runtime, { PATH: '' }, { project, command: named }).found).toEqual({
      path: named,
      via: 'config',
    });
  });
});

describe('vendor runtimes', () => {
  it('each CLI is named as its runtime and set by FLOTILLA_<NAME>_BIN (skippedProjectClis relies on it)', async () => {
    const { BUILT_RUNTIMES, loadRuntime } = await import('../../src/runtimes/index.js');
    for (const name of BUILT_RUNTIMES)
      expect(await loadRuntime(name)).toMatchObject({ binary: name, binEnv: `FLOTILLA_${name.toUpperCase()}_BIN` });
  });
});

describe("packagedVersion: an npm-installed CLI's version without starting it", () => {
  it("reads each pinned CLI's package (Claude Code's platform package included), also through a link", () => {
    const packages = {
      claude: '@anthropic-ai/claude-code',
      codex: '@openai/codex',
      gemini: '@google/gemini-cli',
    } as const;
    for (const name of ['claude', 'codex', 'gemini'] as const)
      expect(packagedVersion(pinnedRuntimeBinary(name), packages[name]), name).toBe(TESTED[name]);
    const d = dir();
    symlinkSync(pinnedRuntimeBinary('gemini'), join(d, 'gemini'));
    expect(packagedVersion(join(d, 'gemini'), packages.gemini)).toBe(TESTED.gemini);
  });

  it('says nothing for a CLI outside its package: a wrapper script, another package, a missing file', () => {
    const d = dir();
    expect(packagedVersion(cli(join(d, 'bin', 'claude')), '@anthropic-ai/claude-code')).toBeUndefined();
    writeFileSync(join(d, 'package.json'), JSON.stringify({ name: 'my-wrappers', version: '9.9.9' }));
    expect(packagedVersion(join(d, 'bin', 'claude'), '@anthropic-ai/claude-code')).toBeUndefined();
    writeFileSync(join(d, 'package.json'), '{ not json');
    expect(packagedVersion(join(d, 'bin', 'claude'), '@anthropic-ai/claude-code')).toBeUndefined();
    expect(packagedVersion(join(d, 'none'), '@anthropic-ai/claude-code')).toBeUndefined();
  });
});
