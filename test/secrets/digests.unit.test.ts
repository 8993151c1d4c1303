import { spawn } from 'node:child_process';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { fleetRedactor, recordSecretDigests } from '../../src/secrets/digests.js';
import { endHolders } from '../../src/secrets/holders.js';
import { tempFleet, type TempFleet } from '../helpers/fleet.js';
import { eventually } from '../helpers/tmux.js';

/** docs/security-trust.md "Redaction": the fleet's digest set and the holders ended at expiry. */

let fleet: TempFleet;
beforeEach(() => {
  fleet = tempFleet();
});
afterEach(() => fleet.cleanup());

const VALUE = 'ghp_S3cretValue-For/Tests+42';

describe("the fleet's digest set", () => {
  it('lets another process redact a value it never held, in every spelling, and keeps nothing of the value on disk', () => {
    const before = fleetRedactor(fleet.layout);
    expect(before(`x ${VALUE} y`)).toBe(`x ${VALUE} y`);
    recordSecretDigests(fleet.layout, 'github-token', VALUE);
    // A redactor made elsewhere (a sibling's harness): it knows the value only by digest.
    const r = fleetRedactor(fleet.layout);
    expect(r(`token=${VALUE}\n`)).toBe('token=[secret:github-token]\n');
    expect(r(`a${VALUE}${VALUE}b`)).toBe('a[secret:github-token][secret:github-token]b');
    expect(r(Buffer.from(VALUE).toString('base64'))).toBe('[secret:github-token]');
    expect(r(encodeURIComponent(VALUE))).toBe('[secret:github-token]');
    expect(r(JSON.stringify({ v: VALUE }))).toBe('{"v":"[secret:github-token]"}');
    expect(r('nothing here, not even ghp_S3cretValue-For/Tests+4')).toBe(
      'nothing here, not even ghp_S3cretValue-For/Tests+4',
    );
    // The earlier redactor picks the new entry up too.
    expect(before(VALUE)).toBe('[secret:github-token]');
    for (const name of readdirSync(fleet.layout.secretsDir)) {
      const file = join(fleet.layout.secretsDir, name);
      expect(statSync(file).mode & 0o077, name).toBe(0);
      const text = readFileSync(file, 'latin1');
      expect(text).not.toContain(VALUE);
      expect(text).not.toContain(Buffer.from(VALUE).toString('base64').slice(0, 12));
    }
  });

  it('finds a value anywhere in a long text', () => {
    recordSecretDigests(fleet.layout, 'k', VALUE);
    const long = 'x'.repeat(20_000) + VALUE + 'y'.repeat(20_000);
    expect(fleetRedactor(fleet.layout)(long)).toBe('x'.repeat(20_000) + '[secret:k]' + 'y'.repeat(20_000));
  });
});

describe('holders at expiry', () => {
  it('signals only the holders it may end, reports the others, and finds no process with a longer value', async () => {
    const env = (v: string) => ({ env: { PATH: process.env.PATH, GITHUB_TOKEN: v }, stdio: 'ignore' as const });
    const ours = spawn('sleep', ['61'], env(VALUE));
    const theirs = spawn('sleep', ['62'], env(VALUE));
    const other = spawn('sleep', ['63'], env(VALUE + 'x'));
    try {
      for (const c of [ours, theirs, other])
        await eventually(
          () => readFileSync(`/proc/${c.pid}/cmdline`, 'utf8').startsWith('sleep'),
          30_000,
          'sleep to exec',
        );
      const { ended, left } = endHolders('GITHUB_TOKEN', Buffer.from(VALUE), (pid) => pid === ours.pid);
      expect(ended).toEqual([{ pid: ours.pid, command: 'sleep 61' }]);
      expect(left).toEqual([{ pid: theirs.pid, command: 'sleep 62' }]);
      await eventually(() => ours.exitCode !== null || ours.signalCode !== null, 30_000, 'the holder to end');
      expect(ours.signalCode).toBe('SIGTERM');
      expect(theirs.exitCode).toBeNull();
      expect(theirs.signalCode).toBeNull();
      expect(other.exitCode).toBeNull();
    } finally {
      for (const c of [ours, theirs, other]) c.kill('SIGKILL');
    }
  });
});
