import { execa } from 'execa';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSshd, type Sshd } from '../helpers/sshd.js';

/**
 * The test's second host logs in with a pristine home made for the test, never the login
 * user's real one: the login shell runs no dotfile of the machine running the tests (a real
 * ~/.bashrc once ran `pyenv rehash` in every login and hung later ones on its lock).
 */
let sshd: Sshd;
beforeAll(async () => {
  sshd = await startSshd();
}, 120_000);
afterAll(async () => {
  await sshd?.kill();
});

const login = async (command: string) =>
  execa('ssh', [...sshd.clientOptions, '-p', String(sshd.port), 'root@127.0.0.1', command], { stdin: 'ignore' });

describe('the test sshd', { timeout: 120_000 }, () => {
  it("gives each login the test's home, and the login shell reads that home's .bashrc", async () => {
    // Seeded to show which .bashrc the login shell runs: this one, so the real one is not.
    writeFileSync(join(sshd.home, '.bashrc'), 'export FLOTILLA_TEST_BASHRC=ran\n');
    const r = await login(`printf '%s\\n' "$HOME" ~ "\${FLOTILLA_TEST_BASHRC-none}" "\${PYENV_ROOT-none}"`);
    expect(r.stdout.split('\n')).toEqual([sshd.home, sshd.home, 'ran', 'none']);
    expect(r.stderr).toBe('');
    expect(sshd.home).toContain('/.test-homes/');
  });
});
