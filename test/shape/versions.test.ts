import { readFileSync, readdirSync, statSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  compareVersions,
  isTestedVersion,
  MINIMUM,
  parseVersion,
  TESTED,
  VERSION,
  versionAtLeast,
} from '../../src/versions.js';

/** One version and one set of minimums (src/versions.ts); npm's copies in package.json agree with them. */
const repo = resolve(import.meta.dirname, '..', '..');
const pkg = JSON.parse(readFileSync(join(repo, 'package.json'), 'utf8')) as {
  version: string;
  engines: { node: string };
  devDependencies: Record<string, string>;
};

function sourceFiles(dir: string, out: string[] = []): string[] {
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) sourceFiles(path, out);
    else if (name.endsWith('.ts')) out.push(path);
  }
  return out;
}

describe('versions', () => {
  it("Flotilla's version is package.json's, and no source repeats it", () => {
    expect(VERSION).toBe(pkg.version);
    const literal = new RegExp(`['"\`]${pkg.version.replace(/\./g, '\\.')}['"\`]`);
    const repeats = sourceFiles(join(repo, 'src'))
      .filter((f) => literal.test(readFileSync(f, 'utf8')))
      .map((f) => relative(repo, f));
    expect(repeats).toEqual([]);
  });

  it("package.json's engines are the minimum; its pinned vendor CLIs are the tested versions, none below its minimum", () => {
    expect(pkg.engines.node).toBe(`>=${MINIMUM.node}`);
    expect(pkg.devDependencies['@anthropic-ai/claude-code']).toBe(TESTED.claude);
    expect(pkg.devDependencies['@openai/codex']).toBe(TESTED.codex);
    expect(pkg.devDependencies['@google/gemini-cli']).toBe(TESTED.gemini);
    for (const name of ['claude', 'codex', 'gemini'] as const)
      expect(versionAtLeast(TESTED[name], MINIMUM[name])).toBe(true);
  });

  it.each([
    ['2.1.197 (Claude Code)', '2.1.197', true],
    ['2.1.198 (Claude Code)', '2.1.197', false],
    ['codex-cli 0.169.0', '0.169.0', true],
    ['0.60.1', '0.61.0', false],
    ['no version here', '0.61.0', false],
  ])('isTestedVersion(%s, %s) is %s', (found, tested, want) => {
    expect(isTestedVersion(found, tested)).toBe(want);
  });

  it('one version comparison: no other file defines its own', () => {
    const own = sourceFiles(join(repo, 'src'))
      .filter((f) => !f.endsWith(join('src', 'versions.ts')))
      .filter((f) => /function\s+(versionAtLeast|compareVersions)\b/.test(readFileSync(f, 'utf8')))
      .map((f) => relative(repo, f));
    expect(own).toEqual([]);
  });

  it.each([
    ['v20.19.1', '20.19', true],
    ['v20.18.3', '20.19', false],
    ['v22.0.0', '20.19', true],
    ['tmux 3.3a', '3.2', true],
    ['tmux next-3.4', '3.4', true],
    ['tmux 3.1c', '3.2', false],
    ['2.1.197 (Claude Code)', '2.1.197', true],
    ['2.1.96 (Claude Code)', '2.1.197', false],
    ['codex-cli 0.169.0', '0.169.0', true],
    ['codex-cli 0.99.9', '0.169.0', false],
    ['0.61.0', '0.61.0', true],
    ['0.7.12', '0.61.0', false],
    ['3.10', '3.9', true],
    ['not a version', '1.0', false],
  ])('%j is at least %j: %s', (found, min, ok) => {
    expect(versionAtLeast(found, min)).toBe(ok);
  });

  it('compares part by part, missing parts as 0', () => {
    expect(compareVersions([3, 2], [3, 2, 0])).toBe(0);
    expect(compareVersions([3, 10], [3, 9])).toBeGreaterThan(0);
    expect(compareVersions([2, 9, 99], [3])).toBeLessThan(0);
    expect(parseVersion('tmux master')).toBeNull();
  });
});
