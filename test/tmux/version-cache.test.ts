import { chmodSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Config } from '../../src/config/schema.js';
import { tmuxPreflight } from '../../src/spawn/launch.js';
import { testHome, type TestHome } from '../helpers/home.js';

/**
 * A spawn's tmux preflight (§5.2) keeps tmux's version per binary (src/tmux/version-cache.ts): a
 * second spawn runs no `tmux -V`, and a tmux replaced since is asked again, so a stale answer never
 * lets a too-old tmux through. The "tmux" here is a script on PATH that logs each run.
 */
let home: TestHome;
let bin: string;
let path: string | undefined;
beforeEach(() => {
  home = testHome();
  bin = join(home.dir, '..', 'bin');
  mkdirSync(bin);
  path = process.env.PATH;
  process.env.PATH = `${bin}:${path}`;
});
afterEach(() => {
  process.env.PATH = path;
  home.cleanup();
});

const runs = () => readFileSync(join(bin, 'runs'), 'utf8').trim().split('\n').length;
/** Installs a tmux printing `version`, as a package manager does: a new file renamed over the old. */
function install(version: string): void {
  const tmp = join(bin, '.tmux-new');
  writeFileSync(tmp, `#!/bin/sh\necho "$*" >> ${join(bin, 'runs')}\necho "tmux ${version}"\n`);
  chmodSync(tmp, 0o755);
  renameSync(tmp, join(bin, 'tmux'));
}
// Only the socket setting is read by the preflight.
const config = { tmux: { socket: null } } as unknown as Config;
const preflight = () => tmuxPreflight(config, { HOME: home.dir, PATH: process.env.PATH });

describe("a spawn's tmux preflight", () => {
  it('asks tmux -V once per binary, and again after tmux is replaced: a too-old tmux is still refused', async () => {
    install('3.3a');
    await preflight();
    await preflight();
    expect(runs()).toBe(1);

    install('3.1c');
    await expect(preflight()).rejects.toThrow(/spawn refused: tmux 3\.1c is too old — Flotilla needs tmux ≥ 3\.2/);
    expect(runs()).toBe(2);
  });

  it('a tmux overwritten in place with another build is asked again', async () => {
    install('3.4');
    await preflight();
    // cp over the same file: same inode, another size.
    writeFileSync(join(bin, 'tmux'), `#!/bin/sh\necho "$*" >> ${join(bin, 'runs')}\necho "tmux 2.9a"\n`);
    await expect(preflight()).rejects.toThrow(/tmux 2\.9a is too old/);
    expect(runs()).toBe(2);
  });
});
