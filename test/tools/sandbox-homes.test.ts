import { execa } from 'execa';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import {
  bubblewrapArgv,
  bubblewrapUserNamespace,
  findBubblewrap,
  hostExecutedPaths,
  type SandboxSpec,
} from '../../src/tools/sandbox.js';
import { credentialPaths } from '../../src/tools/sandbox-credentials.js';
import { tempDir } from '../helpers/fleet.js';
import { HOME_KINDS, testHome, type HomeKind, type TestHome } from '../helpers/home.js';

/**
 * The sandbox starts on every shape of home (docs/security.md, the sandbox's "Read-only again" and
 * "Credentials hidden"): a new person's (nothing in it), one whose dot-folders are links to elsewhere,
 * one whose dot-folders cannot be written (test/helpers/home.ts) — with the project beside
 * the home, inside it, and the home itself as the working folder — for Flotilla's shell and
 * for a vendor CLI (whose sandbox keeps the home readable). The command runs, writes its
 * cwd, and cannot write what the host runs later in the home.
 */
let home: TestHome | undefined;
let tmp: { dir: string; cleanup(): void } | undefined;
afterEach(() => {
  home?.cleanup();
  tmp?.cleanup();
  home = undefined;
  tmp = undefined;
});

type Where = 'beside' | 'inside' | 'home';
const PLACE: Record<Where, string> = {
  beside: 'the project beside it',
  inside: 'the project inside it',
  home: 'the home the working folder',
};

function world(kind: HomeKind, where: Where, vendor: boolean): { spec: SandboxSpec; cwd: string; dir: string } {
  home = testHome(kind);
  tmp = tempDir('flotilla-homes-');
  const dir = home.dir;
  const cwd = where === 'home' ? dir : where === 'inside' ? join(dir, 'src', 'proj') : join(tmp.dir, 'proj');
  mkdirSync(join(cwd, '.flotilla'), { recursive: true });
  const bwrap = findBubblewrap();
  const readOnly = hostExecutedPaths({
    fleetRoot: join(cwd, '.flotilla'),
    project: cwd,
    cwd,
    home: dir,
    userConfigDir: join(dir, '.config', 'flotilla'),
    userCacheDir: join(dir, '.cache', 'flotilla'),
  });
  const creds = credentialPaths({ home: dir, env: { HOME: dir }, ...(vendor ? { runtime: 'claude' as const } : {}) });
  const spec: SandboxSpec = {
    writable: [cwd],
    readOnly: [...readOnly, ...creds.own],
    ...(vendor ? { visible: [dir] } : {}),
    hidden: creds.hidden,
    network: false,
    bwrap,
    userNamespace: bubblewrapUserNamespace(bwrap),
    direct: true,
  };
  return { spec, cwd, dir };
}

describe('the sandbox on every shape of home', () => {
  const cases = HOME_KINDS.flatMap((kind) =>
    (['beside', 'inside', 'home'] as const).flatMap((where) =>
      [false, true].map(
        (vendor) => [kind, PLACE[where], vendor ? 'a vendor CLI' : 'a shell command', where, vendor] as const,
      ),
    ),
  );
  it.each(cases)('a %s home, %s: %s', async (kind, _place, _who, where, vendor) => {
    const { spec, cwd, dir } = world(kind, where, vendor);
    writeFileSync(join(dir, 'notes.txt'), 'NOTES\n');
    const script = [
      'echo work > work.txt && echo cwd:ok',
      `cat '${join(dir, 'notes.txt')}'`,
      `mkdir -p '${join(dir, '.flotilla', 'agents')}' 2>/dev/null && echo > '${join(dir, '.flotilla', 'agents', 'evil.md')}' 2>/dev/null && echo flotilla:WROTE`,
      `mkdir -p '${join(dir, '.claude', 'agents')}' 2>/dev/null && echo > '${join(dir, '.claude', 'agents', 'evil.md')}' 2>/dev/null && echo claude:WROTE`,
      `mkdir -p '${join(dir, '.config', 'flotilla')}' 2>/dev/null && echo > '${join(dir, '.config', 'flotilla', 'config.yaml')}' 2>/dev/null && echo config:WROTE`,
      'echo end',
    ].join('\n');
    const argv = bubblewrapArgv(spec, ['sh', '-c', script]);
    const r = await execa(argv[0]!, argv.slice(1), { cwd, reject: false, stdin: 'ignore' });
    expect(r.stderr).not.toContain('bwrap');
    expect(r.stdout).toContain('cwd:ok');
    expect(r.stdout).toContain('end');
    // A home under a writable cwd is the person's choice; elsewhere the home is read-only.
    if (where !== 'home') expect(r.stdout).toContain('NOTES');
    expect(r.stdout).not.toContain('WROTE');
    expect(existsSync(join(dir, '.flotilla', 'agents', 'evil.md'))).toBe(false);
    expect(existsSync(join(dir, '.claude', 'agents', 'evil.md'))).toBe(false);
    expect(existsSync(join(dir, '.config', 'flotilla', 'config.yaml'))).toBe(false);
  });
});
