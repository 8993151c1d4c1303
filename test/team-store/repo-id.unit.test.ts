import { execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { repoIdentity } from '../../src/team-store/repo-id.js';
import { tempDir } from '../helpers/fleet.js';

/** A repository's identity on the bus (docs/decisions-hosts.md "One board and one set of leases on the bus"). */
const dirs: { cleanup(): void }[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) d.cleanup();
});

function git(cwd: string, ...args: string[]): string {
  return execFileSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@t', ...args], { cwd, encoding: 'utf8' }).trim();
}

/**
 * A repository whose first commit holds `content`: two made in the same second with the same content would have one
 * root commit.
 */
function repo(content = 'a\n'): string {
  const d = tempDir('flotilla-repo-id-');
  dirs.push(d);
  writeFileSync(join(d.dir, 'a.txt'), content);
  git(d.dir, 'init', '-q');
  git(d.dir, 'add', '.');
  git(d.dir, 'commit', '-qm', 'first');
  return d.dir;
}

describe('repoIdentity', () => {
  it('is the root commit: two clones at different paths (and commits) share it, another repository has its own', () => {
    const origin = repo();
    const root = git(origin, 'rev-list', '--max-parents=0', 'HEAD');
    const place = tempDir('flotilla-repo-id-');
    dirs.push(place);
    git(place.dir, 'clone', '-q', origin, 'one');
    git(place.dir, 'clone', '-q', origin, 'two');
    writeFileSync(join(place.dir, 'two', 'b.txt'), 'b\n');
    git(join(place.dir, 'two'), 'add', '.');
    git(join(place.dir, 'two'), 'commit', '-qm', 'second');
    expect(repoIdentity(join(place.dir, 'one'), { host: 'a' })).toBe(root);
    expect(repoIdentity(join(place.dir, 'two'), { host: 'b' })).toBe(root);
    expect(repoIdentity(repo('another\n'), { host: 'a' })).not.toBe(root);
  });

  it('a folder in no repository is keyed by host and path: two such folders are two keys', () => {
    const d = tempDir('flotilla-repo-id-');
    dirs.push(d);
    const plain = join(d.dir, 'plain');
    mkdirSync(plain);
    const here = repoIdentity(plain, { host: 'here' });
    expect(here).toMatch(/^path-[0-9a-f]{24}$/);
    const other = join(d.dir, 'other');
    mkdirSync(other);
    expect(repoIdentity(other, { host: 'here' })).not.toBe(here);
  });
});
