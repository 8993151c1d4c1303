import { existsSync, mkdirSync, readFileSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { mirrorLogin, type LoginMirror } from '../../src/harness/cli-host/login-mirror.js';
import { tempDir } from '../helpers/fleet.js';

/**
 * The shim's copy of a shared login for a sandboxed CLI (docs/decisions-hosts.md, "A refreshed login
 * is written back by the shim"), on real temp folders: what each side finds after the other
 * changed (sync() is what the folder watchers call on every change).
 */
let temp: ReturnType<typeof tempDir>;
let person: string;
let mirror: LoginMirror | undefined;
const login = (access: string) => JSON.stringify({ access_token: access, refresh_token: `refresh-of-${access}` });

beforeEach(() => {
  temp = tempDir('flotilla-login-mirror-');
  // The person's login as `codex login` leaves it: the file this unit mirrors.
  mkdirSync(join(temp.dir, 'home', '.codex'), { recursive: true });
  person = join(temp.dir, 'home', '.codex', 'auth.json');
  writeFileSync(person, login('first'), { mode: 0o600 });
});
afterEach(() => {
  mirror?.close();
  mirror = undefined;
  temp.cleanup();
});

describe('mirrorLogin', () => {
  it("starts as the person's file, readable by its owner only, in a folder of its own", () => {
    mirror = mirrorLogin(person, join(temp.dir, 'secrets', 'logins', 'a'));
    expect(mirror.file).toBe(join(temp.dir, 'secrets', 'logins', 'a', 'auth.json'));
    expect(readFileSync(mirror.file, 'utf8')).toBe(login('first'));
    expect(statSync(mirror.file).mode & 0o777).toBe(0o600);
    expect(statSync(mirror.dir).mode & 0o777).toBe(0o700);
  });

  it("a token the CLI refreshed in its copy lands in the person's file", () => {
    mirror = mirrorLogin(person, join(temp.dir, 'mirror'));
    writeFileSync(mirror.file, login('refreshed'));
    mirror.sync();
    expect(readFileSync(person, 'utf8')).toBe(login('refreshed'));
    expect(statSync(person).mode & 0o777).toBe(0o600);
  });

  it("a token refreshed meanwhile by another agent or the person reaches the CLI's copy", () => {
    mirror = mirrorLogin(person, join(temp.dir, 'mirror'));
    writeFileSync(person, login('by-another-agent'));
    mirror.sync();
    expect(readFileSync(mirror.file, 'utf8')).toBe(login('by-another-agent'));
  });

  it('a file half-written in place is left alone until it is whole', () => {
    mirror = mirrorLogin(person, join(temp.dir, 'mirror'));
    writeFileSync(mirror.file, '{"access_token": "refr');
    mirror.sync();
    expect(readFileSync(person, 'utf8')).toBe(login('first'));
    writeFileSync(mirror.file, login('refreshed'));
    mirror.sync();
    expect(readFileSync(person, 'utf8')).toBe(login('refreshed'));
  });

  it("writes where the person's file leads when it is a link (a dotfiles checkout)", () => {
    mkdirSync(join(temp.dir, 'dotfiles'));
    const real = join(temp.dir, 'dotfiles', 'auth.json');
    writeFileSync(real, login('first'), { mode: 0o600 });
    const linked = join(temp.dir, 'home', '.codex', 'linked.json');
    symlinkSync(real, linked);
    mirror = mirrorLogin(linked, join(temp.dir, 'mirror'));
    writeFileSync(mirror.file, login('refreshed'));
    mirror.sync();
    expect(readFileSync(real, 'utf8')).toBe(login('refreshed'));
  });

  it('on close, writes back a last refresh and removes the copy', () => {
    const m = mirrorLogin(person, join(temp.dir, 'mirror'));
    writeFileSync(m.file, login('refreshed-at-the-end'));
    m.close();
    expect(readFileSync(person, 'utf8')).toBe(login('refreshed-at-the-end'));
    expect(existsSync(m.dir)).toBe(false);
  });
});
