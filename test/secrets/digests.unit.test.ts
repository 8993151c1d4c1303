import { spawn } from 'node:child_process';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { fleetRedactor, recordSecretDigests } from '../../src/secrets/digests.js';
import { endHolders } from '../../src/secrets/holders.js';
import { tempFleet, type TempFleet } from '../helpers/fleet.js';
import { eventually } from '../helpers/tmux.js';

/** docs/security.md "Redaction": the fleet's digest set and the holders ended at expiry. */

let fleet: TempFleet;
beforeEach(() => { fleet = tempFleet(); });
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
    expect(r('nothing here, not even ghp_S3cretValue-For/Tests+4')).toBe('nothing here, not even ghp_S3cretValue-For/Tests+4');
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
  it('ends a process that still has VAR=value in its environment, and no other', async () => {
    const holder = spawn('sleep', ['60'], { env: { PATH: process.env.PATH, GITHUB_TOKEN: VALUE }, stdio: 'ignore' });
    const other = spawn('sleep', ['60'], { env: { PATH: process.env.PATH, GITHUB_TOKEN: VALUE + 'x' }, stdio: 'ignore' });
    try {
      await eventually(() => readFileSync(`/proc/${holder.pid}/cmdline`, 'utf8').startsWith('sleep'), 30_000, 'sleep to exec');
      const ended = endHolders('GITHUB_TOKEN', Buffer.from(VALUE));
      expect(ended.map((e) => e.pid)).toEqual([holder.pid]);
      expect(ended[0]!.command).toBe('sleep 60');
      await eventually(() => holder.exitCode !== null || holder.signalCode !== null, 30_000, 'the holder to end');
      expect(other.exitCode).toBeNull();
    } finally {
      holder.kill('SIGKILL');
      other.kill('SIGKILL');
    }
  });
});
