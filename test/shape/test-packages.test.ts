import { readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { requireTool, TEST_TOOLS } from '../helpers/requires.js';

/**
 * The packages a newcomer installs (README.md), CI installs (.ci/run) and the tests name when a tool is missing agree.
 */
const repo = resolve(import.meta.dirname, '..', '..');
const packages = [...new Set(Object.values(TEST_TOOLS))].sort();

describe('the packages the tests need', () => {
  it("README's apt-get line installs every one, and nothing else", () => {
    const line = /^sudo apt-get install -y (.+?)\s+#/m.exec(readFileSync(join(repo, 'README.md'), 'utf8'));
    expect(line, 'README.md has an apt-get install line').not.toBeNull();
    expect(line![1]!.split(/\s+/).sort()).toEqual(packages);
  });

  it('.ci/run installs every one when it is missing', () => {
    const installed = [...readFileSync(join(repo, '.ci', 'run'), 'utf8').matchAll(/missing="\$missing ([\w-]+)"/g)].map(
      (m) => m[1]!,
    );
    expect(installed.sort()).toEqual(packages);
  });

  it('every command a test runs by name is one of them, or in every Debian (procps is not)', () => {
    // Essential or required in Debian (coreutils, bash, dash, mount, util-linux, libc-bin), Node's own, or
    // openssh-client's: nothing to install beyond the line above.
    const everywhere = new Set([
      'sh',
      'bash',
      'sleep',
      'cat',
      'node',
      'npx',
      'mount',
      'umount',
      'unshare',
      'getconf',
      'ssh-keygen',
    ]);
    const run = /(?<![.\w])(?:execa|execaSync|execFile|execFileSync|spawn|spawnSync)\(\s*'([\w.-]+)'/g;
    const strays: string[] = [];
    for (const file of readdirSync(join(repo, 'test'), { recursive: true, encoding: 'utf8' })) {
      if (!file.endsWith('.ts')) continue;
      for (const m of readFileSync(join(repo, 'test', file), 'utf8').matchAll(run))
        if (!(m[1]! in TEST_TOOLS) && !everywhere.has(m[1]!) && !m[1]!.endsWith('.mjs'))
          strays.push(`${file}: ${m[1]!}`);
    }
    expect(strays).toEqual([]);
  });

  it('a missing tool fails in one line naming its package', () => {
    const path = process.env.PATH;
    process.env.PATH = '/nonexistent';
    try {
      expect(() => requireTool('nats-server')).toThrow(
        /^nats-server is not installed: this test needs it — sudo apt-get install -y nats-server \(README.md, "Requirements"\)$/,
      );
    } finally {
      process.env.PATH = path;
    }
  });
});
