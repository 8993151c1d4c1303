import { execa } from 'execa';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { isProcessAlive } from '../../src/fleet/proc.js';
import { listRecords } from '../../src/fleet/registry.js';
import { resolveLayout } from '../../src/layout/layout.js';
import { CLI } from '../helpers/cli.js';
import { tempDir } from '../helpers/fleet.js';
import { testHome, type TestHome } from '../helpers/home.js';
import { eventually, tmuxServer, type TmuxServer } from '../helpers/tmux.js';

let project: { dir: string; cleanup(): void } | undefined;
let home: TestHome | undefined;
let tmux: TmuxServer | undefined;
afterEach(async () => {
  // Harnesses end themselves when tmux goes (SIGHUP) and write their last records: wait for
  // them to exit before removing the project under them.
  const pids = project
    ? listRecords(resolveLayout({ cwd: project.dir, env: {} })).flatMap((r) =>
        r.pid ? [[r.pid, r.pidStartTime] as const] : [],
      )
    : [];
  await tmux?.kill();
  await eventually(
    () => pids.every(([pid, start]) => !isProcessAlive(pid, start)),
    15_000,
    'the harnesses to exit',
  ).catch(() => undefined);
  // A spawn under way when tmux went may still write a file or two: retry the removal.
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
  home?.cleanup();
  home = undefined;
});

/** A small git project with TODOs and an uncommitted change, for the demo to look at. */
async function demoProject(): Promise<string> {
  project = tempDir('flotilla-up-');
  const dir = project.dir;
  const git = (...args: string[]) =>
    execa('git', ['-c', 'user.email=t@example.com', '-c', 'user.name=t', ...args], { cwd: dir });
  await git('init', '-q');
  writeFileSync(join(dir, 'app.ts'), '// TODO: handle errors\nexport const x = 1; // FIXME: name\n');
  await git('add', 'app.ts');
  await git('commit', '-qm', 'init');
  writeFileSync(join(dir, 'notes.md'), '# Notes\nTODO: write the docs\n');
  return dir;
}

/** `flotilla up` as a person would run it, on the private server, with no model configured. */
function up(dir: string, socket: string, ...args: string[]) {
  // A home of its own beside the project, as a person has: what Flotilla keeps there (code cache) stays out of git.
  home ??= testHome();
  const env: Record<string, string> = {
    PATH: process.env.PATH ?? '',
    HOME: home.dir,
    XDG_CONFIG_HOME: join(home.dir, '.config'),
    FLOTILLA_TMUX_SOCKET: socket,
    LANG: 'C.UTF-8',
  };
  return execa(process.execPath, [CLI, 'up', ...args], { cwd: dir, env, extendEnv: false, reject: false });
}

describe('flotilla up', () => {
  it('opens the demo fleet offline: the lead spawns two children, sums up their results, and the dashboard shows the final states; a second up reuses the session', async () => {
    const dir = await demoProject();
    tmux = tmuxServer();
    const first = await up(dir, tmux.socket, '--detach');
    expect(first.stderr).toMatch(/offline demo on the scripted model/);
    expect(first.exitCode).toBe(0);
    expect(first.stdout).toMatch(new RegExp(`tmux -L ${tmux.socket} attach -t flotilla-`));

    const layout = resolveLayout({ cwd: dir, env: {} });
    const lead = await eventually(
      () => listRecords(layout).find((r) => r.name === 'demo-lead'),
      10_000,
      'the demo lead',
    );
    expect(lead).toMatchObject({ depth: 0, scripted: true, mode: 'interactive', spawnedBy: 'human' });

    // The whole demo is bounded by a minute (it takes a few seconds).
    const done = await eventually(
      () => {
        const recs = listRecords(layout);
        const l = recs.find((r) => r.id === lead.id);
        const kids = recs.filter((r) => r.parentId === lead.id);
        const finished = (r: (typeof recs)[number]) => r.lastTask?.status === 'completed' || r.status === 'completed';
        return l && finished(l) && kids.length === 2 && kids.every(finished) ? { lead: l, kids } : undefined;
      },
      60_000,
      'the demo to finish',
    );
    expect(done.kids.map((k) => k.name).sort()).toEqual(['checker', 'todo-finder']);
    for (const kid of done.kids)
      expect(kid).toMatchObject({ depth: 1, rootId: lead.id, scripted: true, spawnedBy: 'agent' });

    // The lead's answer names each child and what it found in this very project.
    const summary = readFileSync(layout.output(lead.id), 'utf8');
    const todos = done.kids.find((k) => k.name === 'todo-finder')!;
    const check = done.kids.find((k) => k.name === 'checker')!;
    expect(summary).toContain(`## ${todos.id}: completed`);
    expect(summary).toContain(`## ${check.id}: completed`);
    expect(summary).toContain('Result: 3 TODO/FIXME comments found.');
    expect(summary).toMatch(/app\.ts:1:\/\/ TODO: handle errors/);
    // notes.md; the fleet root ignores itself (.flotilla/.gitignore), so it is not one of them.
    expect(summary).toMatch(/Result: 1 changed or untracked files on branch/);

    // The dashboard lists every agent in its final state.
    const session = (await tmux.tmux('list-sessions', '-F', '#{session_name}')).trim();
    const screen = await tmux.waitFor(
      `=${session}:dashboard`,
      new RegExp(`${lead.id} \\*\\s+idle ✓[\\s\\S]*├ ${todos.id} \\*\\s+idle ✓[\\s\\S]*└ ${check.id} \\*\\s+idle ✓`),
      5_000,
    );
    expect(screen).toMatch(/3 agents, 0 working/);
    // The root's pane says it runs the scripted demo.
    await tmux.waitFor(`=${session}:root`, /\[scripted model\][\s\S]*Offline demo on the scripted model/, 5_000);

    const windows = async () =>
      (await tmux!.tmux('list-windows', '-a', '-F', '#{session_name} #{window_name}')).trim().split('\n').sort();
    const before = await windows();
    expect(before).toEqual(
      [`${session} ${check.id}`, `${session} ${todos.id}`, `${session} dashboard`, `${session} root`].sort(),
    );

    const second = await up(dir, tmux.socket, '--detach');
    expect(second.exitCode).toBe(0);
    expect(second.stderr).toMatch(/found session .* with the dashboard and its root window/);
    expect(await windows()).toEqual(before);
    expect((await tmux.tmux('list-sessions', '-F', '#{session_name}')).trim().split('\n')).toEqual([session]);
    expect(listRecords(layout)).toHaveLength(3);
  }, 180_000);

  it("two ups at once open one session and one root: the second uses the first one's", async () => {
    const dir = await demoProject();
    tmux = tmuxServer();
    const runs = await Promise.all([
      up(dir, tmux.socket, '--detach', '--json'),
      up(dir, tmux.socket, '--detach', '--json'),
      up(dir, tmux.socket, '--detach', '--json'),
    ]);
    for (const r of runs) expect(r.exitCode, r.stderr).toBe(0);
    const results = runs.map(
      (r) => JSON.parse(r.stdout) as { created: boolean; root: { created: boolean; windowId: string } },
    );
    expect(results.filter((r) => r.created)).toHaveLength(1);
    expect(results.filter((r) => r.root.created)).toHaveLength(1);
    expect(new Set(results.map((r) => r.root.windowId)).size).toBe(1);
    expect((await tmux.tmux('list-sessions', '-F', '#{session_name}')).trim().split('\n')).toHaveLength(1);
    const session = (await tmux.tmux('list-sessions', '-F', '#{session_name}')).trim();
    const names = (await tmux.tmux('list-windows', '-t', `=${session}`, '-F', '#{window_name}')).trim().split('\n');
    expect(names.filter((n) => n === 'root')).toHaveLength(1);
    expect(names.filter((n) => n === 'dashboard')).toHaveLength(1);
    expect(listRecords(resolveLayout({ cwd: dir, env: {} })).filter((r) => r.depth === 0)).toHaveLength(1);
  }, 180_000);

  it('puts back a dashboard that was closed, without a second session or root', async () => {
    const dir = await demoProject();
    tmux = tmuxServer();
    expect((await up(dir, tmux.socket, '--detach')).exitCode).toBe(0);
    const session = (await tmux.tmux('list-sessions', '-F', '#{session_name}')).trim();
    await tmux.tmux('kill-window', '-t', `=${session}:dashboard`);
    const again = await up(dir, tmux.socket, '--detach', '--json');
    expect(again.exitCode).toBe(0);
    const result = JSON.parse(again.stdout) as {
      created: boolean;
      dashboard: { created: boolean };
      root: { created: boolean };
    };
    expect(result).toMatchObject({ created: false, dashboard: { created: true }, root: { created: false } });
    const names = (await tmux.tmux('list-windows', '-t', `=${session}`, '-F', '#{window_index} #{window_name}'))
      .trim()
      .split('\n');
    expect(names[0]).toMatch(/ dashboard$/);
    expect(names.filter((n) => n.endsWith(' root'))).toHaveLength(1);
    expect((await tmux.tmux('list-sessions')).trim().split('\n')).toHaveLength(1);
  }, 120_000);
});
