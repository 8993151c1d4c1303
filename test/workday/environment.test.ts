import { execa } from 'execa';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { isProcessAlive } from '../../src/fleet/proc.js';
import { listRecords } from '../../src/fleet/registry.js';
import { resolveLayout } from '../../src/layout/layout.js';
import { TOOLS_DIR } from '../../src/layout/package.js';
import { CLI } from '../helpers/cli.js';
import { tempDir } from '../helpers/fleet.js';
import { eventually, tmuxServer, type TmuxServer } from '../helpers/tmux.js';

/**
 * The environment a person works in (docs/architecture.md, "flotilla up"): every window of
 * the fleet session finds the tools, looking never makes a fleet root, and the demo leaves
 * the person's repository as it found it.
 */

let project: { dir: string; cleanup(): void } | undefined;
let tmux: TmuxServer | undefined;
afterEach(async () => {
  const pids = project
    ? listRecords(resolveLayout({ cwd: project.dir, env: {} })).flatMap((r) =>
        r.pid ? [[r.pid, r.pidStartTime] as const] : [],
      )
    : [];
  await tmux?.kill();
  tmux = undefined;
  await eventually(
    () => pids.every(([pid, start]) => !isProcessAlive(pid, start)),
    15_000,
    'the harnesses to exit',
  ).catch(() => undefined);
  if (project) {
    const dir = project.dir;
    await eventually(
      () => {
        rmSync(dir, { recursive: true, force: true, maxRetries: 5 });
        return true;
      },
      15_000,
      `removal of ${dir}`,
    );
  }
  project = undefined;
});

const git = (dir: string, ...args: string[]) =>
  execa('git', ['-c', 'user.email=t@example.com', '-c', 'user.name=t', ...args], {
    cwd: dir,
    env: { HOME: dir, PATH: process.env.PATH ?? '' },
    extendEnv: false,
  });

/** A clean, committed git project (nothing untracked), with a HOME inside it. */
async function cleanProject(): Promise<string> {
  project = tempDir('flotilla-env-');
  const dir = join(project.dir, 'repo');
  mkdirSync(dir);
  await git(dir, 'init', '-q');
  writeFileSync(join(dir, 'app.ts'), '// TODO: handle errors\nexport const x = 1;\n');
  await git(dir, 'add', 'app.ts');
  await git(dir, 'commit', '-qm', 'init');
  return dir;
}

/** A person's environment: fresh HOME (outside the repository), bash as their shell, the private tmux server. */
function personEnv(home: string, socket: string): Record<string, string> {
  return {
    PATH: process.env.PATH ?? '',
    HOME: home,
    XDG_CONFIG_HOME: join(home, '.config'),
    FLOTILLA_TMUX_SOCKET: socket,
    LANG: 'C.UTF-8',
    SHELL: '/bin/bash',
    TERM: 'xterm-256color',
  };
}

function flotillaIn(cwd: string, env: Record<string, string>, ...args: string[]) {
  return execa(process.execPath, [CLI, ...args], { cwd, env, extendEnv: false, reject: false });
}

describe('the environment of a working day', () => {
  it('a window a person opens in the fleet session has flotilla and spawn-agent on PATH, even after their login profile and ~/.bashrc reset it', async () => {
    const dir = await cleanProject();
    const home = join(project!.dir, 'home');
    mkdirSync(home);
    // What many dotfiles do: a PATH set from scratch.
    writeFileSync(join(home, '.bashrc'), 'PATH=/usr/local/bin:/usr/bin:/bin\n');
    writeFileSync(join(home, '.profile'), '. "$HOME/.bashrc"\n');
    tmux = tmuxServer();
    const up = await flotillaIn(dir, personEnv(home, tmux.socket), 'up', '--detach');
    expect(up.exitCode, up.stderr).toBe(0);
    const session = (await tmux.tmux('list-sessions', '-F', '#{session_name}')).trim();

    // Ctrl-b c: a new window with tmux's own default command, and a split of it.
    const out = join(project!.dir, 'found');
    for (const [i, open] of [
      ['new-window', '-t', `=${session}:`],
      ['split-window', '-t', `=${session}:`],
    ].entries()) {
      await tmux.tmux(...open);
      const pane = (await tmux.tmux('display-message', '-p', '-t', `=${session}:`, '#{pane_id}')).trim();
      const file = `${out}-${i}`;
      await tmux.tmux(
        'send-keys',
        '-t',
        pane,
        '-l',
        `{ command -v flotilla; command -v spawn-agent; echo end; } > ${file}.tmp && mv ${file}.tmp ${file}`,
      );
      await tmux.tmux('send-keys', '-t', pane, 'Enter');
      const found = await eventually(
        () => existsSync(file) && readFileSync(file, 'utf8'),
        30_000,
        `the window's answer (${open[0]})`,
      );
      expect(found.trim().split('\n')).toEqual([join(TOOLS_DIR, 'flotilla'), join(TOOLS_DIR, 'spawn-agent'), 'end']);
    }
    // The person's window is not an agent.
    const env = await tmux.tmux('show-environment', '-t', `=${session}:`);
    expect(env).not.toMatch(/^FLOTILLA_AGENT_ID=/m);
  }, 180_000);

  it('status, audit, doctor and watch outside a checkout create nothing, and say where a fleet would be', async () => {
    project = tempDir('flotilla-env-');
    const dir = join(project.dir, 'plain');
    const home = join(project.dir, 'home');
    mkdirSync(dir);
    mkdirSync(home);
    tmux = tmuxServer();
    const env = personEnv(home, tmux.socket);
    const status = await flotillaIn(dir, env, 'status');
    expect(status.exitCode, status.stderr).toBe(0);
    expect(status.stdout.trim()).toBe(
      `no fleet here: ${join(dir, '.flotilla')} does not exist yet (${dir} is not in a git checkout, so a fleet would be made right there) — 'flotilla up' or spawn-agent makes it, or pass --root DIR`,
    );
    const json = await flotillaIn(dir, env, 'status', '--json');
    expect([json.exitCode, json.stdout.trim()]).toEqual([0, '[]']);
    const audit = await flotillaIn(dir, env, 'audit');
    expect(audit.exitCode).toBe(0);
    expect(audit.stderr).toMatch(/^flotilla: no fleet here: .*\.flotilla does not exist/);
    const follow = await flotillaIn(dir, env, 'audit', '--follow');
    expect(follow.exitCode).toBe(1);
    expect(follow.stderr).toMatch(/no fleet here/);
    const doctor = await flotillaIn(dir, env, 'doctor');
    expect(doctor.stdout).toMatch(
      new RegExp(`fleet root: ${join(dir, '.flotilla').replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} \\(not created yet`),
    );

    // The dashboard, in a real terminal, refuses with the same line instead of making a root.
    await tmux.tmux(
      'new-session',
      '-d',
      '-s',
      'look',
      '-x',
      '200',
      '-y',
      '20',
      '-c',
      dir,
      '-e',
      `HOME=${home}`,
      '-e',
      `FLOTILLA_TMUX_SOCKET=${tmux.socket}`,
      `${process.execPath} ${CLI} watch; echo "exit=$?"; sleep 600`,
    );
    const screen = await tmux.waitFor('=look:', /exit=\d/);
    expect(screen).toMatch(/no fleet here: .*does not exist/);
    expect(screen).toMatch(/exit=1/);

    expect(readdirSync(dir)).toEqual([]);
    expect(existsSync(join(home, '.flotilla'))).toBe(false);
  }, 120_000);

  it('inside a checkout with no fleet yet, status names the project and still creates nothing', async () => {
    const dir = await cleanProject();
    const home = join(project!.dir, 'home');
    mkdirSync(home);
    const sub = join(dir, 'src');
    mkdirSync(sub);
    const env = personEnv(home, 'unused');
    const status = await flotillaIn(sub, env, 'status');
    expect(status.exitCode).toBe(0);
    expect(status.stdout.trim()).toBe(
      `no fleet here: ${join(dir, '.flotilla')} does not exist yet — 'flotilla up' or spawn-agent in ${dir} makes it (or pass --root DIR)`,
    );
    expect(existsSync(join(dir, '.flotilla'))).toBe(false);
    expect((await git(dir, 'status', '--porcelain')).stdout).toBe('');
  }, 60_000);

  it("the offline demo leaves git status clean: its definitions are built in, and an older version's installed ones are removed", async () => {
    const dir = await cleanProject();
    const home = join(project!.dir, 'home');
    mkdirSync(home);
    // What an older `flotilla up` left behind, untracked.
    mkdirSync(join(dir, '.flotilla', 'agents'), { recursive: true });
    writeFileSync(
      join(dir, '.flotilla', 'agents', 'checker.md'),
      "---\n# Installed by 'flotilla up' for the offline demo (no model configured); refreshed on each demo run. Delete it freely.\nname: checker\n---\nold\n",
    );
    tmux = tmuxServer();
    const up = await flotillaIn(dir, personEnv(home, tmux.socket), 'up', '--detach');
    expect(up.exitCode, up.stderr).toBe(0);
    expect(up.stderr).toMatch(/offline demo/);

    const layout = resolveLayout({ cwd: dir, env: {} });
    const done = await eventually(
      () => {
        const recs = listRecords(layout);
        const lead = recs.find((r) => r.name === 'demo-lead');
        const kids = recs.filter((r) => lead && r.parentId === lead.id);
        const finished = (r: (typeof recs)[number]) => r.lastTask?.status === 'completed';
        return lead && finished(lead) && kids.length === 2 && kids.every(finished) ? { lead, kids } : undefined;
      },
      90_000,
      'the demo to finish',
    );
    // The checker saw the clean tree the person has.
    const summary = readFileSync(layout.output(done.lead.id), 'utf8');
    expect(summary).toMatch(/Result: 0 changed or untracked files on branch/);
    expect((await git(dir, 'status', '--porcelain', '--untracked-files=all')).stdout).toBe('');
    expect(existsSync(join(dir, '.flotilla', 'agents'))).toBe(false);
  }, 180_000);
});
