import { execa } from 'execa';
import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { layoutFor } from '../../src/layout/layout.js';
import { addWorktree } from '../../src/work/worktree.js';
import { commandEnvironment } from '../../src/tools/command-env.js';
import {
  bubblewrapArgv,
  bubblewrapUserNamespace,
  findBubblewrap,
  hostExecutedPaths,
  pidNamespaceArgv,
  tmuxHiding,
  type SandboxSpec,
} from '../../src/tools/sandbox.js';
import { createShellTool } from '../../src/tools/shell.js';
import { tmuxSocketPaths } from '../../src/tmux/sockets.js';
import { tempDir } from '../helpers/fleet.js';
import { tmuxServer, type TmuxServer } from '../helpers/tmux.js';
import { ctxFor } from './process-helpers.js';

/**
 * The fleet's controls out of a command's reach: no tmux server of the user (wherever its
 * socket lives), and no way to move the git dir, `.claude/` or the fleet root aside and put
 * another in its place. Each test runs the attack from inside a real bubblewrap sandbox
 * built as the harness builds it, and asserts the host did not change.
 */
let tmp: { dir: string; cleanup(): void };
let project: string;
let home: string;
const servers: TmuxServer[] = [];
beforeEach(async () => {
  tmp = tempDir('flotilla-controls-');
  project = join(tmp.dir, 'project');
  home = join(tmp.dir, 'home');
  for (const d of [join(project, '.flotilla', 'agents'), join(project, '.claude', 'agents'), home])
    mkdirSync(d, { recursive: true });
  await git(project, 'init', '-q');
  await git(project, 'commit', '-q', '--allow-empty', '-m', 'first');
});
afterEach(async () => {
  // Last started first: the second server lives in a folder under the first one's, which its kill removes.
  for (const s of servers.splice(0).reverse()) await s.kill();
  tmp.cleanup();
});

const git = (cwd: string, ...args: string[]) =>
  execa('git', ['-c', 'user.email=t@example.com', '-c', 'user.name=t', '-C', cwd, ...args]);

/** The spec the harness builds (harness/build-tools.ts) for an agent working in `cwd`. */
function specFor(cwd: string, env: NodeJS.ProcessEnv, network = true): SandboxSpec {
  const bwrap = findBubblewrap();
  const readOnly = hostExecutedPaths({
    fleetRoot: join(project, '.flotilla'),
    project,
    cwd,
    home,
    userConfigDir: join(home, '.config', 'flotilla'),
    userCacheDir: join(home, '.cache', 'flotilla'),
  });
  const tmux = tmuxHiding(tmuxSocketPaths(env), [cwd, home]);
  return {
    writable: [cwd],
    readOnly,
    network,
    bwrap,
    userNamespace: bubblewrapUserNamespace(bwrap),
    hidden: tmux.hidden,
    covered: tmux.covered,
  };
}

function sandboxed(command: string, env: NodeJS.ProcessEnv, cwd = project, network = true) {
  const spec = specFor(cwd, env, network);
  return createShellTool({
    timeoutSecs: 60,
    env: commandEnvironment(env),
    wrap: (argv) => bubblewrapArgv(spec, argv),
  }).execute({ command }, ctxFor(cwd));
}

async function victimServer(opts: { outsideTmp?: boolean } = {}): Promise<{ server: TmuxServer; pid: number }> {
  const server = tmuxServer(opts);
  servers.push(server);
  await server.tmux('new-session', '-d', '-s', 'victim', '-x', '100', '-y', '20', 'cat');
  return { server, pid: Number(await server.tmux('display-message', '-p', '#{pid}')) };
}

describe('no tmux server is reachable from a command', () => {
  it('inside the sandbox, network on: not through $TMUX, -S on a socket outside /tmp, TMUX_TMPDIR, or the default -L names', async () => {
    const { server, pid } = await victimServer({ outsideTmp: true });
    // A second server through TMUX_TMPDIR, outside /tmp too; the harness's env does not name it.
    const altTmp = join(server.socket, '..', 'alt');
    mkdirSync(altTmp, { mode: 0o700 });
    await execa('tmux', ['-L', 'second', 'new-session', '-d', '-s', 'other', 'cat'], { env: { TMUX_TMPDIR: altTmp } });
    servers.push({
      kill: () =>
        execa('tmux', ['-L', 'second', 'kill-server'], { env: { TMUX_TMPDIR: altTmp }, reject: false }).then(
          () => undefined,
        ),
    } as TmuxServer);
    const marker = join(project, 'ran-on-host');
    const env = { ...process.env, TMUX: `${server.socket},${pid},0`, TMUX_PANE: '%0' };
    const sock = server.socket;
    const r = await sandboxed(
      [
        'printenv TMUX && echo HAS-TMUX; printenv TMUX_PANE && echo HAS-PANE',
        'tmux list-sessions && echo LISTED-DEFAULT',
        `tmux -S ${sock} send-keys -t victim typed-by-agent Enter && echo SENT`,
        `tmux -S ${sock} run-shell 'touch ${marker}' && echo RAN`,
        `TMUX=${sock},${pid},0 tmux list-panes -a && echo LISTED-ENV`,
        `TMUX_TMPDIR=${altTmp} tmux -L second list-sessions && echo LISTED-TMPDIR`,
        `tmux -S ${altTmp}/tmux-$(id -u)/second list-sessions && echo LISTED-ALT`,
        `test -e ${sock} && echo SEES-SOCKET`,
        `ls -A ${join(sock, '..')} | grep -x s && echo SEES-DIR`,
        'echo done',
      ].join('\n'),
      env,
    );
    expect(r.output).toContain('done');
    expect(r.output).not.toMatch(/HAS-TMUX|HAS-PANE|LISTED|SENT|RAN|SEES/);
    expect(existsSync(marker)).toBe(false);
    expect(await server.capture('victim')).not.toContain('typed-by-agent');
  });

  it('without the sandbox, a command has neither TMUX nor TMUX_PANE', async () => {
    const env = { ...process.env, TMUX: '/somewhere/sock,1,0', TMUX_PANE: '%3' };
    const r = await createShellTool({
      timeoutSecs: 30,
      env: commandEnvironment(env),
      wrap: (argv) => pidNamespaceArgv(argv),
    }).execute({ command: 'env | grep ^TMUX || echo no-tmux' }, ctxFor(project));
    expect(r.output).toContain('no-tmux');
  });

  it('hides the socket directory itself, and covers only the socket where that directory is one the command needs', () => {
    const hiding = tmuxHiding({ sockets: ['/srv/tmux/s', `${home}/tmux.sock`, '/x.sock'], dirs: ['/run/tmux-1000'] }, [
      project,
      home,
    ]);
    expect(hiding.hidden.sort()).toEqual(['/run/tmux-1000', '/srv/tmux']);
    expect(hiding.covered.sort()).toEqual([`${home}/tmux.sock`, '/x.sock'].sort());
  });
});

describe('the git dir, .claude/ and the fleet root cannot be moved aside or replaced', () => {
  it('the .git swap fails: no rename, no removal, no new commondir, hooks, modules or config', async () => {
    const before = snapshot(join(project, '.git'));
    const r = await sandboxed(
      [
        'mv .git .git-old && echo MOVED-GIT',
        'rm -rf .git 2>/dev/null; test -d .git/objects || echo REMOVED-GIT',
        'echo ../evil > .git/commondir && echo COMMONDIR',
        'mkdir -p .git/modules/evil && echo MODULES',
        'echo "#!/bin/sh" > .git/hooks/post-checkout && echo HOOK',
        'git config core.fsmonitor "touch fsmonitor-ran" && echo FSMONITOR',
        'mv .claude .claude-old && echo MOVED-CLAUDE',
        'mv .flotilla .flotilla-old && echo MOVED-FLEET',
        'echo ok > work.txt && echo WORK-OK',
        'git status --short >/dev/null && echo STATUS-OK',
      ].join('\n'),
      process.env,
    );
    expect(r.output).toContain('WORK-OK');
    expect(r.output).toContain('STATUS-OK');
    expect(r.output).not.toMatch(/MOVED|REMOVED|COMMONDIR|MODULES|HOOK|FSMONITOR/);
    expect(snapshot(join(project, '.git'))).toEqual(before);
    for (const p of ['.git-old', '.claude-old', '.flotilla-old']) expect(existsSync(join(project, p))).toBe(false);
    expect(statSync(join(project, '.claude', 'agents')).isDirectory()).toBe(true);
    await git(project, 'status');
    expect(existsSync(join(project, 'fsmonitor-ran'))).toBe(false);
  });

  it('in a worktree: the .git file, its git dir and the common dir all hold', async () => {
    const wt = join(tmp.dir, 'wt');
    await git(project, 'worktree', 'add', '-q', wt, '-b', 'agent');
    const gitFile = readFileSync(join(wt, '.git'), 'utf8');
    const gitDir = join(project, '.git', 'worktrees', 'wt');
    const before = snapshot(join(project, '.git'));
    const r = await sandboxed(
      [
        'mv .git .git-old && echo MOVED-FILE',
        'echo "gitdir: /elsewhere" > .git && echo REPLACED-FILE',
        `echo ${tmp.dir}/evil > ${gitDir}/commondir && echo COMMONDIR`,
        `echo x > ${project}/.git/hooks/post-checkout && echo HOOK`,
        'echo ok > work.txt && echo WORK-OK',
      ].join('\n'),
      process.env,
      wt,
    );
    expect(r.output).toContain('WORK-OK');
    expect(r.output).not.toMatch(/MOVED|REPLACED|COMMONDIR|HOOK/);
    expect(readFileSync(join(wt, '.git'), 'utf8')).toBe(gitFile);
    expect(snapshot(join(project, '.git'))).toEqual(before);
  });

  it("the harness's own git calls run no hook and no fsmonitor", async () => {
    const ran = join(tmp.dir, 'ran');
    writeFileSync(join(project, '.git', 'hooks', 'post-checkout'), `#!/bin/sh\necho hook >> ${ran}\n`, { mode: 0o755 });
    await git(project, 'config', 'core.fsmonitor', `echo fsmonitor >> ${ran}; false`);
    const layout = layoutFor(join(project, '.flotilla'));
    const { path } = await addWorktree(layout, 'agent-1');
    expect(existsSync(join(path, '.git'))).toBe(true);
    expect(existsSync(ran)).toBe(false);
  });
});

/** Every path under a directory with its size and mode: what a swap or an added file would change. */
function snapshot(dir: string): string[] {
  const out: string[] = [];
  const walk = (d: string): void => {
    for (const name of readdirSync(d).sort()) {
      if (name === 'index' || name.endsWith('.lock')) continue;
      const p = join(d, name);
      const s = statSync(p);
      out.push(`${p.slice(dir.length)} ${s.isDirectory() ? 'dir' : s.size} ${s.mode.toString(8)}`);
      if (s.isDirectory()) walk(p);
    }
  };
  walk(dir);
  return out;
}
