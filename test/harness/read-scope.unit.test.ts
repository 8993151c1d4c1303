import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { agentReadScope, readScopeCheck, staticBase } from '../../src/harness/read-scope.js';
import { layoutFor } from '../../src/layout/layout.js';
import { PERMISSION_MODES, type PermissionMode } from '../../src/policy/permission-mode.js';

/**
 * Where an agent's read, glob and grep may look (docs/security.md, "What reads may touch"),
 * with a fresh HOME holding a fake ~/.ssh, a project, a folder elsewhere and a symlink from the
 * project to the keys: what each call gets in each mode.
 */
let base: string;
let home: string;
let project: string;
let elsewhere: string;

beforeEach(() => {
  base = mkdtempSync(join(tmpdir(), 'flotilla-read-scope-'));
  home = join(base, 'home');
  project = join(base, 'project');
  elsewhere = join(base, 'elsewhere');
  for (const d of [join(home, '.ssh'), join(home, '.aws'), project, elsewhere, join(base, 'common')])
    mkdirSync(d, { recursive: true });
  writeFileSync(join(home, '.ssh', 'id_ed25519'), 'FAKE KEY\n');
  writeFileSync(join(project, 'README.md'), 'hello\n');
  writeFileSync(join(elsewhere, 'notes.txt'), 'elsewhere\n');
  writeFileSync(join(base, 'common', 'spec.md'), 'common\n');
  symlinkSync(join(home, '.ssh'), join(project, 'keys'));
});
afterEach(() => rmSync(base, { recursive: true, force: true }));

function check(mode: PermissionMode, readDirs: string[] = []) {
  const layout = layoutFor(join(project, '.flotilla'), project);
  return readScopeCheck(agentReadScope({ layout, cwd: project, readDirs, env: { HOME: home } }), mode, project, home);
}

describe('read scope', () => {
  it.each(PERMISSION_MODES)('%s: the project reads freely', (mode) => {
    const c = check(mode);
    expect(c('read', { path: 'README.md' })).toEqual({ decision: 'allow' });
    expect(c('glob', { pattern: 'src/**/*.ts' })).toEqual({ decision: 'allow' });
    expect(c('grep', { pattern: 'x' })).toEqual({ decision: 'allow' });
  });

  it.each([
    ['plan', 'ask'],
    ['default', 'ask'],
    ['accept_edits', 'ask'],
    ['dont_ask', 'deny'],
    ['bypass_permissions', 'allow'],
  ] as const)('%s: a read outside the project → %s', (mode, decision) => {
    const c = check(mode);
    for (const [tool, input] of [
      ['read', { path: join(elsewhere, 'notes.txt') }],
      ['glob', { pattern: '../elsewhere/*.txt' }],
      ['grep', { pattern: 'x', path: elsewhere }],
      ['Read', { path: '../elsewhere/notes.txt' }],
    ] as const) {
      expect({ tool, ...c(tool, input) }).toMatchObject({ tool, decision });
    }
    if (decision === 'deny')
      expect(c('read', { path: join(elsewhere, 'notes.txt') })).toMatchObject({
        rule: 'read-scope:outside',
        reason: expect.stringContaining('permissions.read_dirs'),
      });
  });

  it.each(PERMISSION_MODES)(
    '%s: credential folders are refused, through a symlink and ~ too, unless bypass_permissions',
    (mode) => {
      const c = check(mode);
      const want =
        mode === 'bypass_permissions' ? { decision: 'allow' } : { decision: 'deny', rule: 'read-scope:credentials' };
      expect(c('read', { path: '~/.ssh/id_ed25519' })).toMatchObject(want);
      expect(c('read', { path: 'keys/id_ed25519' })).toMatchObject(want);
      expect(c('glob', { pattern: 'keys/*' })).toMatchObject(want);
      expect(c('grep', { pattern: 'KEY', path: join(home, '.aws') })).toMatchObject(want);
      expect(c('read', { path: join(home, '.config', 'gcloud', 'credentials.db') })).toMatchObject(want);
      expect(c('read', { path: join(project, '.flotilla', 'state', 'secrets', 'x.sock') })).toMatchObject(want);
    },
  );

  it('permissions.read_dirs opens a folder (relative to the project, or ~/), not its neighbours', () => {
    const c = check('dont_ask', ['../common', '~/docs']);
    expect(c('read', { path: join(base, 'common', 'spec.md') })).toEqual({ decision: 'allow' });
    expect(c('read', { path: join(home, 'docs', 'a.md') })).toEqual({ decision: 'allow' });
    expect(c('read', { path: join(base, 'common-not', 'x') })).toMatchObject({ decision: 'deny' });
    // A credentials folder stays closed even when a read_dir contains it.
    expect(check('dont_ask', ['~'])('read', { path: '~/.ssh/id_ed25519' })).toMatchObject({
      decision: 'deny',
      rule: 'read-scope:credentials',
    });
  });

  it('other tools are not its business', () => {
    expect(check('dont_ask')('shell', { command: 'cat ~/.ssh/id_ed25519' })).toBeUndefined();
    expect(check('dont_ask')('write', { path: '/etc/x' })).toBeUndefined();
  });

  it("a glob looks from its pattern's fixed part", () => {
    expect(staticBase('src/**/*.ts')).toBe('src');
    expect(staticBase('*.ts')).toBe('.');
    expect(staticBase('../../x/*')).toBe('../../x');
    expect(staticBase('/etc/passwd')).toBe('/etc');
    expect(staticBase('/*')).toBe('/');
  });
});
