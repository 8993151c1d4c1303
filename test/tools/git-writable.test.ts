import { execa } from 'execa';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ensureGitignore, layoutFor } from '../../src/layout/layout.js';
import { gitWrites, withGitWrites, worktreeGitDirs } from '../../src/tools/git-writable.js';
import {
  bubblewrapArgv,
  bubblewrapUserNamespace,
  findBubblewrap,
  hostExecutedPaths,
  type SandboxSpec,
} from '../../src/tools/sandbox.js';
import { createShellTool } from '../../src/tools/shell.js';
import type { AgentRecord } from '../../src/fleet/record.js';
import { importInPlaceBranches } from '../../src/work/import-branch.js';
import { addInPlaceBranch } from '../../src/work/in-place.js';
import { branchStanding, standingMark } from '../../src/work/standing.js';
import { tempDir } from '../helpers/fleet.js';
import { recordInput } from '../helpers/records.js';
import { ctxFor } from './process-helpers.js';

/**
 * Commits in the sandbox (docs/security.md, "Commits in the sandbox"): an agent in its own
 * worktree commits on its branch, and each way of getting the host's git to run something of
 * the agent's, or of moving work that is not its own, fails from inside.
 */
let tmp: { dir: string; cleanup(): void };
let project: string;
let worktree: string;
let marker: string;
// The person's git on the host: no user config of the test machine, an identity of its own.
let hostEnv: NodeJS.ProcessEnv;
const host = (cwd: string, ...args: string[]) => execa('git', args, { cwd, env: hostEnv, extendEnv: false });

beforeEach(async () => {
  tmp = tempDir('flotilla-gitw-');
  project = join(tmp.dir, 'project');
  marker = join(tmp.dir, 'RAN');
  const home = join(tmp.dir, 'home');
  mkdirSync(home);
  hostEnv = {
    PATH: process.env.PATH,
    HOME: home,
    GIT_CONFIG_NOSYSTEM: '1',
    GIT_AUTHOR_NAME: 'person',
    GIT_AUTHOR_EMAIL: 'p@example.com',
    GIT_COMMITTER_NAME: 'person',
    GIT_COMMITTER_EMAIL: 'p@example.com',
  };
  mkdirSync(project);
  await host(project, 'init', '-q', '-b', 'main');
  writeFileSync(join(project, 'a.txt'), 'a\n');
  await host(project, 'add', 'a.txt');
  await host(project, 'commit', '-q', '-m', 'init');
  worktree = join(project, '.flotilla', 'state', 'worktrees', 'w1');
  await host(project, 'worktree', 'add', '-q', worktree, '-b', 'flotilla/w1');
  await host(
    project,
    'worktree',
    'add',
    '-q',
    join(project, '.flotilla', 'state', 'worktrees', 'w2'),
    '-b',
    'flotilla/w2',
  );
  // Another agent's branch only in packed-refs and with no reflog, as after the person's `git gc` and reflog expiry.
  await host(project, 'pack-refs', '--all');
  rmSync(join(project, '.git', 'logs', 'refs', 'heads', 'flotilla', 'w2'));
});
afterEach(() => tmp.cleanup());

function sandboxFor(id: string, writes = gitWrites(worktree, id), cwd = worktree): (argv: string[]) => string[] {
  const bwrap = findBubblewrap();
  const home = join(tmp.dir, 'home');
  const readOnly = hostExecutedPaths({
    fleetRoot: join(project, '.flotilla'),
    project,
    cwd,
    home,
    userConfigDir: join(home, '.config', 'flotilla'),
    userCacheDir: join(home, '.cache', 'flotilla'),
  });
  const spec: SandboxSpec = {
    writable: [cwd],
    readOnly,
    network: false,
    bwrap,
    userNamespace: bubblewrapUserNamespace(bwrap),
  };
  return (argv) => bubblewrapArgv(withGitWrites(spec, writes), argv);
}

const agentEnv = {
  ...process.env,
  GIT_AUTHOR_NAME: 'w1',
  GIT_AUTHOR_EMAIL: 'w1@flotilla',
  GIT_COMMITTER_NAME: 'w1',
  GIT_COMMITTER_EMAIL: 'w1@flotilla',
};
const inSandbox = (command: string) =>
  createShellTool({ timeoutSecs: 60, env: agentEnv, wrap: sandboxFor('w1') }).execute({ command }, ctxFor(worktree));
// An agent working in place, in the person's checkout: no git writes at all.
const inPlace = (command: string) =>
  createShellTool({ timeoutSecs: 60, env: agentEnv, wrap: sandboxFor('w1', gitWrites(null, 'w1'), project) }).execute(
    { command },
    ctxFor(project),
  );

describe('commits in the sandbox', () => {
  it("another agent's commit in flight while a sandbox is made is left able to finish, and to commit again", async () => {
    // w2 is committing: git holds its branch's lock file while w1's sandbox is worked out, and
    // has renamed it into place by the time bubblewrap's mounts are made (spawns run at once).
    const lock = join(project, '.git', 'refs', 'heads', 'flotilla', 'w2.lock');
    mkdirSync(join(lock, '..'), { recursive: true });
    writeFileSync(lock, '');
    const writes = gitWrites(worktree, 'w1');
    rmSync(lock);
    const argv = sandboxFor('w1', writes)(['true']);
    expect((await execa(argv[0]!, argv.slice(1), { reject: false })).exitCode).toBe(0);
    const w2 = join(project, '.flotilla', 'state', 'worktrees', 'w2');
    writeFileSync(join(w2, 'a.txt'), 'w2\n');
    await host(w2, 'commit', '-q', '-am', 'w2 fixes a');
    expect((await host(project, 'log', '-1', '--format=%s', 'flotilla/w2')).stdout).toBe('w2 fixes a');
  });

  it('an agent in its worktree commits on its own branch, authored by its id, and the index and reflog follow', async () => {
    const r = await inSandbox('echo fixed > a.txt && git add a.txt && git commit -q -m "fix a" && echo COMMITTED');
    expect(r.output).toContain('COMMITTED');
    expect((await host(project, 'log', '-1', '--format=%an <%ae> %s', 'flotilla/w1')).stdout).toBe(
      'w1 <w1@flotilla> fix a',
    );
    expect((await host(project, 'log', '-1', '--format=%s', 'main')).stdout).toBe('init');
    expect((await host(worktree, 'status', '--porcelain')).stdout).toBe('');
    expect((await host(project, 'reflog', 'flotilla/w1')).stdout).toContain('fix a');
  });

  it('every attempt on what the host runs or on work not its own fails, and the person’s own commit afterwards runs nothing of the agent’s', async () => {
    const { gitDir, common } = worktreeGitDirs(worktree)!;
    const hook = `printf '#!/bin/sh\\ntouch ${marker}\\n'`;
    const attacks: Record<string, string> = {
      'plant a hook': `${hook} > ${common}/hooks/pre-commit && chmod +x ${common}/hooks/pre-commit`,
      'core.hooksPath': `mkdir -p h && ${hook} > h/pre-commit && chmod +x h/pre-commit && git config core.hooksPath $PWD/h`,
      'core.hooksPath per worktree': `git config --worktree core.hooksPath $PWD/h || echo '[core] hooksPath = '$PWD/h > ${gitDir}/config.worktree`,
      'core.fsmonitor': `git config core.fsmonitor "touch ${marker}"`,
      'a filter through .gitattributes and config': `echo '* filter=evil' > .gitattributes && git config filter.evil.clean "touch ${marker}; cat"`,
      'info/attributes': `echo '* filter=evil' > ${common}/info/attributes`,
      'move main': 'git update-ref refs/heads/main $(git commit-tree -m evil HEAD^{tree})',
      'make a branch outside flotilla/': 'git branch other',
      'move another agent’s packed branch': `git -c core.logAllRefUpdates=false update-ref refs/heads/flotilla/w2 $(git commit-tree -m evil HEAD^{tree})`,
      'rewrite its worktree’s gitdir': `echo ${tmp.dir}/elsewhere/.git > ${gitDir}/gitdir`,
      'rewrite its commondir': `echo ${tmp.dir} > ${gitDir}/commondir`,
      'rewrite its .git pointer': `echo "gitdir: ${tmp.dir}/evil" > .git`,
      'plant alternates': `echo ${tmp.dir} > ${common}/objects/info/alternates`,
      'plant commondir in the common dir': `echo ${tmp.dir} > ${common}/commondir`,
    };
    const mainBefore = (await host(project, 'rev-parse', 'main')).stdout;
    const w2Before = (await host(project, 'rev-parse', 'flotilla/w2')).stdout;
    const configBefore = readFileSync(join(common, 'config'), 'utf8');
    const script = Object.entries(attacks)
      .map(([name, cmd], i) => `( ${cmd} ) >/dev/null 2>&1 && echo "WORKED ${i} ${name}"`)
      .join('\n');
    const r = await inSandbox(`${script}\necho end`);
    expect(r.output).toContain('end');
    expect(r.output.split('\n').filter((l) => l.startsWith('WORKED'))).toEqual([]);
    expect((await host(project, 'rev-parse', 'main')).stdout).toBe(mainBefore);
    expect((await host(project, 'rev-parse', 'flotilla/w2')).stdout).toBe(w2Before);
    expect(readFileSync(join(common, 'config'), 'utf8')).toBe(configBefore);
    expect(readFileSync(join(gitDir, 'gitdir'), 'utf8')).toBe(`${join(worktree, '.git')}\n`);
    expect(readFileSync(join(worktree, '.git'), 'utf8')).toContain(gitDir);
    expect(readFileSync(join(gitDir, 'config.worktree'), 'utf8')).toBe('');
    for (const planted of [
      join(common, 'hooks', 'pre-commit'),
      join(common, 'commondir'),
      join(common, 'objects', 'info', 'alternates'),
      join(common, 'info', 'attributes'),
    ]) {
      expect(existsSync(planted), planted).toBe(false);
    }
    // The agent commits what it could write (its .gitattributes); the person merges it and commits on the host.
    expect((await inSandbox('git add -A && git commit -q -m work && echo COMMITTED')).output).toContain('COMMITTED');
    await host(project, 'merge', '-q', '--no-edit', 'flotilla/w1');
    writeFileSync(join(project, 'a.txt'), 'person\n');
    await host(project, 'commit', '-q', '-am', 'person');
    await host(worktree, 'status');
    expect(existsSync(marker)).toBe(false);
    expect((await host(project, 'log', '-1', '--format=%an', 'main')).stdout).toBe('person');
  });

  it('no ref but its own branch moves, in its worktree or in place, and its commit and stash still work', async () => {
    // The person's own refs beside the agents': a feature branch and a tag, loose and packed, and a stash.
    await host(project, 'branch', 'feature');
    await host(project, 'tag', 'v1');
    await host(project, 'branch', 'packed');
    await host(project, 'pack-refs');
    await host(project, 'tag', 'v0');
    writeFileSync(join(project, 'a.txt'), 'person wip\n');
    await host(project, 'stash', '-q');
    const refsBefore = (await host(project, 'for-each-ref', '--format=%(refname) %(objectname)')).stdout;
    const stashBefore = (await host(project, 'stash', 'list')).stdout;
    const packedBefore = readFileSync(join(project, '.git', 'packed-refs'), 'utf8');
    const evil = 'git commit-tree -m evil HEAD^{tree}';
    const attacks: Record<string, string> = {
      'branch -f main': 'git branch -f main HEAD',
      'branch -f feature': 'git branch -f feature HEAD',
      'update-ref main': `git update-ref refs/heads/main $(${evil})`,
      'update-ref a packed branch': `git update-ref refs/heads/packed $(${evil})`,
      'edit packed-refs': `sed -i 's/^[0-9a-f]* refs\\/heads\\/packed$/'$(${evil})' refs\\/heads\\/packed/' $(git rev-parse --git-common-dir)/packed-refs`,
      'append to packed-refs': `echo "$(${evil}) refs/heads/planted" >> $(git rev-parse --git-common-dir)/packed-refs`,
      tag: 'git tag v2',
      'move a tag': 'git tag -f v1 $(git commit-tree -m evil HEAD^{tree})',
      'delete a tag': 'git tag -d v0',
      'delete a branch': 'git branch -D feature',
      'delete a packed branch': 'git branch -D packed',
      'delete another agent’s branch': 'git update-ref -d refs/heads/flotilla/w2',
      'drop the person’s stash': 'git stash drop',
      'make a branch': 'git branch other',
    };
    const script = Object.entries(attacks)
      .map(([name, cmd], i) => `( ${cmd} ) >/dev/null 2>&1 && echo "WORKED ${i} ${name}"`)
      .join('\n');
    for (const run of [inSandbox, inPlace]) {
      const r = await run(`${script}\necho end`);
      expect(r.output).toContain('end');
      expect(r.output.split('\n').filter((l) => l.startsWith('WORKED'))).toEqual([]);
    }
    expect((await host(project, 'for-each-ref', '--format=%(refname) %(objectname)')).stdout).toBe(refsBefore);
    expect(readFileSync(join(project, '.git', 'packed-refs'), 'utf8')).toBe(packedBefore);
    expect((await host(project, 'stash', 'list')).stdout).toBe(stashBefore);

    // In its worktree it stashes, sees its own stash only, pops it, and commits on its branch.
    const r = await inSandbox(
      [
        'echo first > a.txt && git stash -q && git stash list | wc -l',
        'echo second > a.txt && git stash -q && git stash list | wc -l',
        'git stash pop -q && cat a.txt && git checkout -q -- a.txt',
        // The last pop cannot delete refs/stash (that takes the shared packed-refs.lock), so says so; the stash is
        // empty.
        'git stash pop -q 2>/dev/null && cat a.txt && git stash list | wc -l',
        'echo mine > a.txt && git commit -q -am mine && echo COMMITTED',
      ].join(' && '),
    );
    expect(r.output.split('\n').slice(0, 6)).toEqual(['1', '2', 'second', 'first', '0', 'COMMITTED']);
    expect((await host(project, 'log', '-1', '--format=%s', 'flotilla/w1')).stdout).toBe('mine');
    expect((await host(project, 'stash', 'list')).stdout).toBe(stashBefore);
    const after = (await host(project, 'for-each-ref', '--format=%(refname) %(objectname)')).stdout;
    expect(after.split('\n').filter((l) => !l.startsWith('refs/heads/flotilla/w1 '))).toEqual(
      refsBefore.split('\n').filter((l) => !l.startsWith('refs/heads/flotilla/w1 ')),
    );
  });
});

describe('commits in place, through a git dir of its own', () => {
  // The agent p1 spawned in place: its branch and git dir, as spawn makes them.
  const layout = () => layoutFor(join(project, '.flotilla'), project);
  const placed = async () => {
    // The fleet root's own .gitignore, as `flotilla init` writes it: state/ is never the project's.
    ensureGitignore(layout());
    const base = await addInPlaceBranch(layout(), 'p1', project);
    const env = { ...agentEnv, GIT_AUTHOR_NAME: 'p1', GIT_AUTHOR_EMAIL: 'p1@flotilla' };
    // Worked out at each command, as the harness does.
    const wrap = (argv: string[]) =>
      sandboxFor(
        'p1',
        gitWrites(null, 'p1', { checkout: project, gitDir: layout().inPlaceGitDir('p1') }),
        project,
      )(argv);
    const run = (command: string) =>
      createShellTool({ timeoutSecs: 60, env, wrap }).execute({ command }, ctxFor(project));
    // What the host does before its git reads flotilla/p1 (review, diff, merge, gc, status).
    const bring = async () => (await importInPlaceBranches(layout(), [{ id: 'p1', branch: 'flotilla/p1' }])).get('p1');
    return { base, run, bring };
  };

  it('commits on flotilla/<id> from the person’s HEAD; the person’s branch, index and staged work stay theirs', async () => {
    // The person has work of their own: one file staged, one changed.
    writeFileSync(join(project, 'staged.txt'), 'person staged\n');
    await host(project, 'add', 'staged.txt');
    writeFileSync(join(project, 'a.txt'), 'person edit\n');
    const { base, run, bring } = await placed();
    expect(base).toEqual({ branch: 'main', commit: (await host(project, 'rev-parse', 'main')).stdout });
    const r = await run(
      [
        'git branch --show-current',
        'echo agent > b.txt && git add b.txt && git commit -q -m "add b" && echo COMMITTED',
        'git stash list | wc -l',
        // Its objects packed, as its `git gc` would (-n: info/ is the repository's, read-only): the import takes packs
        // too.
        'git repack -q -d -l -n && ls .git/objects/pack/*.pack | wc -l',
      ].join(' && '),
    );
    expect(r.output.split('\n').slice(0, 4)).toEqual(['flotilla/p1', 'COMMITTED', '0', '1']);
    // Its commit is in its own objects and branch until the host brings it in.
    expect((await host(project, 'rev-parse', 'flotilla/p1')).stdout).toBe(base!.commit);
    expect(await bring()).toBeUndefined();
    expect((await host(project, 'fsck', '--no-dangling')).exitCode).toBe(0);
    expect((await host(project, 'log', '-1', '--format=%an <%ae> %s', 'flotilla/p1')).stdout).toBe(
      'p1 <p1@flotilla> add b',
    );
    // Its commit holds its file only: the person's staged file and edit are not in it.
    expect((await host(project, 'show', '--name-only', '--format=', 'flotilla/p1')).stdout).toBe('b.txt');
    expect((await host(project, 'log', '-1', '--format=%s', 'main')).stdout).toBe('init');
    expect((await host(project, 'symbolic-ref', '--short', 'HEAD')).stdout).toBe('main');
    // The person's index is untouched: staged.txt still staged, a.txt still only changed, b.txt new to them.
    expect((await host(project, 'status', '--porcelain')).stdout.split('\n').sort()).toEqual([
      ' M a.txt',
      '?? b.txt',
      'A  staged.txt',
    ]);
  });

  it('every attempt on what the host runs fails, one on refs lands only in its own git dir, and the person’s own commit afterwards runs nothing of the agent’s', async () => {
    await host(project, 'branch', 'feature');
    const { run, bring } = await placed();
    const common = join(project, '.git');
    const hook = `printf '#!/bin/sh\\ntouch ${marker}\\n'`;
    const attacks: Record<string, string> = {
      'plant a hook': `${hook} > .git/hooks/pre-commit && chmod +x .git/hooks/pre-commit`,
      'plant a hook in a new hooks folder': `mkdir -p .git/hooks && ${hook} > .git/hooks/post-commit && chmod +x .git/hooks/post-commit`,
      'core.hooksPath': `mkdir -p h && ${hook} > h/pre-commit && chmod +x h/pre-commit && git config core.hooksPath $PWD/h`,
      'core.fsmonitor': `git config core.fsmonitor "touch ${marker}"`,
      'a filter through .gitattributes and config': `echo '* filter=evil' > .gitattributes && git config filter.evil.clean "touch ${marker}; cat"`,
      'info/attributes': `echo '* filter=evil' > .git/info/attributes`,
      'move another branch': 'git branch -f feature $(git commit-tree -m evil HEAD^{tree})',
      'plant alternates': `echo ${tmp.dir} > .git/objects/info/alternates`,
      'write into the repository’s objects': 'touch .git/repository-objects/planted',
      'replace .git': 'mv .git .git-old',
    };
    // Its refs are its own: these move only what its own git sees.
    const ownView: Record<string, string> = {
      'move the person’s current branch': 'git update-ref refs/heads/main $(git commit-tree -m evil HEAD^{tree})',
      'move another agent’s packed branch':
        'git update-ref refs/heads/flotilla/w2 $(git commit-tree -m evil HEAD^{tree})',
      'point its HEAD at main and commit':
        'git symbolic-ref HEAD refs/heads/main && git commit -q --allow-empty -m evil',
      'make a branch outside flotilla/': 'git branch other',
    };
    const mainBefore = (await host(project, 'rev-parse', 'main')).stdout;
    const refsBefore = (await host(project, 'for-each-ref', '--format=%(refname) %(objectname)')).stdout;
    const configBefore = readFileSync(join(common, 'config'), 'utf8');
    const script = Object.entries(attacks)
      .map(([name, cmd], i) => `( ${cmd} ) >/dev/null 2>&1 && echo "WORKED ${i} ${name}"`)
      .join('\n');
    const r = await run(`${script}\n${Object.values(ownView).join(' ; ')} >/dev/null 2>&1\necho end`);
    expect(r.output).toContain('end');
    expect(r.output.split('\n').filter((l) => l.startsWith('WORKED'))).toEqual([]);
    expect(await bring()).toBeUndefined();
    expect((await host(project, 'rev-parse', 'main')).stdout).toBe(mainBefore);
    expect((await host(project, 'symbolic-ref', 'HEAD')).stdout).toBe('refs/heads/main');
    expect((await host(project, 'for-each-ref', '--format=%(refname) %(objectname)')).stdout).toBe(refsBefore);
    expect(readFileSync(join(common, 'config'), 'utf8')).toBe(configBefore);
    for (const planted of [
      join(common, 'hooks', 'pre-commit'),
      join(common, 'hooks', 'post-commit'),
      join(common, 'commondir'),
      join(common, 'objects', 'info', 'alternates'),
      join(common, 'objects', 'planted'),
      join(common, 'info', 'attributes'),
    ]) {
      expect(existsSync(planted), planted).toBe(false);
    }
    // Back on its branch it commits what it could write (its .gitattributes); the host brings
    // that in, and the person merges it and commits on the host.
    expect(
      (
        await run(
          'git symbolic-ref HEAD refs/heads/flotilla/p1 && git add -A && git commit -q -m work && echo COMMITTED',
        )
      ).output,
    ).toContain('COMMITTED');
    expect(await bring()).toBeUndefined();
    expect((await host(project, 'log', '-1', '--format=%an %s', 'flotilla/p1')).stdout).toBe('p1 work');
    // Its own git dir is its to spoil: a commondir there points its own git elsewhere, never the host's.
    await run(`echo ${tmp.dir} > .git/commondir; git config core.hooksPath $PWD/h`);
    await host(project, 'stash', '-q', '-u');
    await host(project, 'merge', '-q', '--no-edit', 'flotilla/p1');
    writeFileSync(join(project, 'a.txt'), 'person\n');
    await host(project, 'commit', '-q', '-am', 'person');
    await host(project, 'status');
    expect(existsSync(marker)).toBe(false);
    expect((await host(project, 'log', '-1', '--format=%an', 'main')).stdout).toBe('person');
  });

  it('its rm -rf .git and its tampering with objects harm nothing of the person’s; what it planted in its own is never taken', async () => {
    const { run, bring } = await placed();
    const common = join(project, '.git');
    const p1Before = (await host(project, 'rev-parse', 'flotilla/p1')).stdout;
    const historyBefore = (await host(project, 'log', '--all', '--format=%H %an %s')).stdout;
    const looseBefore = (await host(project, 'rev-list', '--all', '--objects')).stdout;
    // Another repository's commit: the agent links its objects into its own and names it as its tip.
    const other = join(tmp.dir, 'other');
    mkdirSync(other);
    await host(other, 'init', '-q');
    writeFileSync(join(other, 'secret.txt'), 'secret\n');
    await host(other, 'add', '.');
    await host(other, 'commit', '-q', '-m', 'secret');
    const secret = (await host(other, 'rev-parse', 'HEAD')).stdout;
    const [some] = looseBefore.split('\n');
    const file = (id: string) => `${id.slice(0, 2)}/${id.slice(2)}`;
    const tip = '.git/refs/heads/flotilla/p1';
    const attacks: Record<string, string> = {
      'delete the repository’s objects': 'find .git/repository-objects -type f -delete',
      'replace one of them': `printf x > .git/repository-objects/${file(some!)}`,
      'plant one beside them': 'touch .git/repository-objects/planted',
      'name another folder as its alternate': `echo ${join(other, '.git', 'objects')} > .git/objects/info/alternates`,
    };
    const script = Object.entries(attacks)
      .map(([name, cmd], i) => `( ${cmd} ) >/dev/null 2>&1 && echo "WORKED ${i} ${name}"`)
      .join('\n');
    const links = (await host(other, 'rev-list', '--objects', 'HEAD')).stdout
      .split('\n')
      .map((l) => l.split(' ')[0]!)
      .map(
        (id) =>
          `mkdir -p .git/objects/${id.slice(0, 2)} && ln -s ${join(other, '.git', 'objects', file(id))} .git/objects/${file(id)}`,
      );
    const r = await run(`${script}\n${links.join(' && ')} && echo ${secret} > ${tip} && echo LINKED`);
    expect(r.output.split('\n').filter((l) => l.startsWith('WORKED'))).toEqual([]);
    expect(r.output).toContain('LINKED');
    // A link is never followed: the other repository's commit is not whole here, and is not taken.
    expect(await bring()).toMatch(/flotilla\/p1: its commit .* is not whole/);
    expect((await host(project, 'cat-file', '-e', secret).catch((e: { exitCode: number }) => e)).exitCode).toBe(1);
    // A commit of its own whose object file it then fills with another object: index-pack refuses it.
    const forged = await run(
      [
        `echo ${p1Before} > ${tip}`,
        'c=$(git commit-tree -m forged HEAD^{tree})',
        'b=$(echo other | git hash-object -w --stdin)',
        'f=.git/objects/$(echo $c | cut -c1-2)/$(echo $c | cut -c3-)',
        'chmod u+w $f && cp .git/objects/$(echo $b | cut -c1-2)/$(echo $b | cut -c3-) $f',
        `echo $c > ${tip} && echo FORGED`,
      ].join(' && '),
    );
    expect(forged.output).toContain('FORGED');
    expect(await bring()).toMatch(/flotilla\/p1: /);
    // A tip that is no id, and a tip that is a link, are no tip at all.
    await run(`echo 'ref: refs/heads/main' > ${tip}`);
    expect(await bring()).toBeUndefined();
    await run(`rm ${tip} && ln -s ${join(other, '.git', 'refs', 'heads', 'master')} ${tip}`);
    expect(await bring()).toBeUndefined();
    expect((await host(project, 'rev-parse', 'flotilla/p1')).stdout).toBe(p1Before);
    // Then it deletes its git dir, and tries the hooks folder it might have freed.
    const hook = `printf '#!/bin/sh\\ntouch ${marker}\\n'`;
    await run(`rm -rf .git; ${hook} > .git/hooks/pre-commit; chmod +x .git/hooks/pre-commit; true`);
    expect(await bring()).toBeUndefined();
    // The person's repository is whole, its history and objects as they were, and their commit runs nothing.
    expect((await host(project, 'fsck', '--full', '--no-dangling')).exitCode).toBe(0);
    expect((await host(project, 'log', '--all', '--format=%H %an %s')).stdout).toBe(historyBefore);
    expect((await host(project, 'rev-list', '--all', '--objects')).stdout).toBe(looseBefore);
    expect(existsSync(join(common, 'objects', 'planted'))).toBe(false);
    writeFileSync(join(project, 'a.txt'), 'person\n');
    await host(project, 'commit', '-q', '-am', 'person');
    expect(existsSync(marker)).toBe(false);
    expect((await host(project, 'log', '-1', '--format=%an %s', 'main')).stdout).toBe('person person');
  });

  it('status counts its new commits without bringing them in; a tip that is a link or no id is not followed', async () => {
    const { base, run, bring } = await placed();
    const rec = { ...recordInput('p1'), cwd: project, base: base! } as AgentRecord;
    // What `flotilla status` and the dashboard row show for it.
    const mark = async () => standingMark((await branchStanding(layout(), [rec])).get('p1')!);
    const tip = '.git/refs/heads/flotilla/p1';
    const r = await run(
      'for n in 1 2; do echo $n > c$n.txt && git add c$n.txt && git commit -q -m c$n; done && echo OK',
    );
    expect(r.output).toContain('OK');
    await host(project, 'commit', '-q', '--allow-empty', '-m', 'person moves on');
    expect(await mark()).toBe('⎇ flotilla/p1 ↑2 ↓1');
    // Counted where it is: the repository's branch and objects are as they were, and nothing staged is left.
    const newer = (await run(`cat ${tip}`)).output.split('\n')[0]!;
    expect((await host(project, 'rev-parse', 'flotilla/p1')).stdout).toBe(base!.commit);
    expect((await host(project, 'cat-file', '-e', newer).catch((e: { exitCode: number }) => e)).exitCode).toBe(1);
    expect(readdirSync(join(project, '.flotilla', 'state', 'git-dirs'))).toEqual(['p1']);
    // A tip that is a link (to a file naming its own commit), more than one id, or an id it has no object for: the
    // branch as the repository holds it.
    const hostile = [
      `cp ${tip} ${join(project, 'tip-copy')} && rm ${tip} && ln -s ${join(project, 'tip-copy')} ${tip}`,
      `rm ${tip} && echo "${newer} ${newer}" > ${tip}`,
      `echo ${'1234abcd'.repeat(5)} > ${tip}`,
    ];
    for (const attack of hostile) {
      expect((await run(`${attack} && echo OK`)).output).toContain('OK');
      expect(await mark()).toBe('⎇ flotilla/p1 ↑0 ↓1');
    }
    // Its tip back: the end of its task brings its commits in, and the count is the same.
    await run(`echo ${newer} > ${tip}`);
    expect(await bring()).toBeUndefined();
    expect((await host(project, 'rev-parse', 'flotilla/p1')).stdout).toBe(newer);
    expect(await mark()).toBe('⎇ flotilla/p1 ↑2 ↓1');
    // A refresh counts again what an earlier one counted: the same; a new commit of its own or the base moving, anew.
    expect((await run('echo 3 > c3.txt && git add c3.txt && git commit -q -m c3 && echo OK')).output).toContain('OK');
    expect(await mark()).toBe('⎇ flotilla/p1 ↑3 ↓1');
    expect(await mark()).toBe('⎇ flotilla/p1 ↑3 ↓1');
    await host(project, 'commit', '-q', '--allow-empty', '-m', 'person moves on again');
    expect(await mark()).toBe('⎇ flotilla/p1 ↑3 ↓2');
    expect((await run(`echo ${newer} > ${tip} && echo OK`)).output).toContain('OK');
    expect(await mark()).toBe('⎇ flotilla/p1 ↑2 ↓2');
  });

  it('a link it leaves in its git dir where a mount will land makes nothing on the host', async () => {
    const { run } = await placed();
    const elsewhere = join(tmp.dir, 'elsewhere');
    await run(`ln -s ${elsewhere} .git/lfs && ln -s ${elsewhere} .git/refs/notes`);
    // The person's git makes those entries later (git-lfs, git notes); the agent's next command mounts them.
    // The lfs one by hand, as git-lfs would make it: git-lfs is not among what the tests install.
    mkdirSync(join(project, '.git', 'lfs', 'objects'), { recursive: true });
    await host(project, 'notes', 'add', '-m', 'note');
    expect((await run('ls .git/lfs && git notes list | wc -l')).output).toContain('objects\n1');
    expect(existsSync(elsewhere)).toBe(false);
  });

  it('a spawn in place whose flotilla/<id> already exists is refused, naming it', async () => {
    await host(project, 'branch', 'flotilla/p1');
    await expect(addInPlaceBranch(layout(), 'p1', project)).rejects.toThrow(/a branch flotilla\/p1 already exists/);
  });
});
