import { existsSync, readFileSync } from 'node:fs';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { FLEET_SHELL } from '../../src/tmux/fleet-session.js';
import { CLI } from '../helpers/cli.js';
import { eventually } from '../helpers/tmux.js';
import { completionsFrom, fixture, spawnFleet, type SpawnFleet } from './helpers.js';

// End-to-end: the built CLI (dist/) against a private tmux server, driven by scripted models.
beforeAll(() => {
  if (!existsSync(CLI)) throw new Error(`${CLI} is missing: run npx tsc -p tsconfig.build.json first`);
});

let f: SpawnFleet | undefined;
const root0 = (fl: SpawnFleet) => fl.record('lead-root');
afterEach(async () => {
  await f?.close();
  f = undefined;
});

describe('spawn-agent', () => {
  it('a root spawns two children that each run a command; completions, windows, answer, registry and transcripts are complete', async () => {
    f = spawnFleet({ definitions: { lead: 'lead-two.yaml', worker: 'worker.yaml' } });
    const r = await f.spawnAgent(['--wait', '--agent', 'lead', '--id', 'lead-root', 'split the work']);
    expect(r.stderr).toBe('');
    expect(r.exitCode).toBe(0);
    // The root's final answer is the only thing on stdout, and it quotes both results.
    expect(r.stdout).toContain('Both finished.');
    expect(r.stdout).toContain('result-of-w-alpha');
    expect(r.stdout).toContain('result-of-w-beta');
    expect(r.stdout).not.toMatch(/^lead-root$/m);

    expect((await f.windows()).sort()).toEqual(['lead-root', 'w-alpha', 'w-beta']);
    for (const id of ['w-alpha', 'w-beta']) {
      const rec = f.record(id);
      expect(rec.parentId).toBe('lead-root');
      expect(rec.rootId).toBe('lead-root');
      expect(rec.depth).toBe(1);
      expect(rec.tmux?.paneId).toMatch(/^%\d+$/);
      // Spawned from inside tmux (the root's window): the caller's server, named by its socket path.
      expect(rec.tmux?.socket).toMatch(new RegExp(`/${f.tmux.socket}$`));
      expect(rec.tmux?.sessionId).toBe(root0(f).tmux?.sessionId);
      expect(rec.lastTask?.status).toBe('completed');
      const mail = completionsFrom(f, 'lead-root', id);
      expect(mail).toHaveLength(1);
      expect(mail[0]!.status).toBe('completed');
      // The answer of that task, in its own file; output/<id>.md is the latest answer.
      expect(mail[0]!.output_path).toBe(f.layout.taskOutput(id, 1));
      expect(readFileSync(f.layout.output(id), 'utf8')).toContain(`result-of-${id}`);
      const transcript = readFileSync(f.layout.transcript(id), 'utf8');
      expect(transcript).toContain(`result-of-${id}`);
      expect(JSON.parse(readFileSync(f.layout.transcriptMeta(id), 'utf8')).agent_id).toBe(id);
    }
    const root = f.record('lead-root');
    expect(root.depth).toBe(0);
    expect(root.spawnedBy).toBe('human');
    expect(root.lastTask?.status).toBe('completed');
    // The children's completions, which wait_for_agents already returned, are claimed and not
    // answered again: once both are in cur/, any second task would be open or done, and a
    // cancel gives an open one its completion — so exactly one completion stays exactly one.
    const claimed = (id: string) => completionsFrom(f!, 'lead-root', id).some((m) => m.file!.startsWith('cur/'));
    await eventually(() => claimed('w-alpha') && claimed('w-beta'), 60_000, "the children's completions claimed");
    await eventually(
      async () => (await f!.flotilla(['cancel', 'lead-root'])).exitCode === 0,
      30_000,
      'cancel lead-root',
    );
    await eventually(
      () => ['completed', 'cancelled'].includes(f!.record('lead-root').status),
      30_000,
      'lead-root ended',
    );
    expect(f.record('lead-root').task).toBe(1);
    expect(completionsFrom(f, 'human', 'lead-root')).toHaveLength(1);
  }, 180_000);

  it("--wait prints only the child's answer, and exits 1 when the child fails", async () => {
    f = spawnFleet();
    const ok = await f.spawnAgent([
      '--wait',
      '--oneshot',
      '--model',
      `script:${fixture('worker.yaml')}`,
      '--id',
      'w-ok',
      'do it',
    ]);
    expect(ok.exitCode).toBe(0);
    expect(ok.stdout).toBe('Answer: result-of-w-ok');
    const bad = await f.spawnAgent(['--wait', '--model', `script:${fixture('fail.yaml')}`, '--id', 'w-bad', 'do it']);
    expect(bad.exitCode).toBe(1);
    // Only the child's final answer file (here the failure it recorded), nothing else.
    expect(bad.stdout).toBe(readFileSync(f.layout.output('w-bad'), 'utf8').trim());
    expect(bad.stderr).toMatch(
      /^flotilla: w-bad ended failed \(.*scripted failure.*\) — its transcript: flotilla transcript w-bad$/m,
    );
    expect(f.record('w-bad').lastTask?.status).toBe('failed');
  });

  it('prints the id alone, or the record with --json; a refusal for --wait without a task', async () => {
    f = spawnFleet();
    const r = await f.spawnAgent(['--oneshot', '--model', `script:${fixture('worker.yaml')}`, 'do it']);
    expect(r.exitCode).toBe(0);
    expect(r.stdout).toMatch(/^general-[a-z0-9]{6}$/);
    const j = await f.spawnAgent([
      '--json',
      '--oneshot',
      '--id',
      'as-json',
      '--model',
      `script:${fixture('worker.yaml')}`,
      'do it',
    ]);
    const rec = JSON.parse(j.stdout) as { id: string; mode: string; tmux: { windowId: string } };
    expect(rec.id).toBe('as-json');
    expect(rec.mode).toBe('oneshot');
    expect(rec.tmux.windowId).toMatch(/^@\d+$/);
    // No task is a usage error (§2: exit 2), with --wait as without.
    const u = await f.spawnAgent(['--wait']);
    expect(u.exitCode).toBe(2);
    expect(u.stderr).toMatch(/^flotilla: spawn refused: no task given/);
  });

  it('outside tmux with no server running, opens the detached fleet session', async () => {
    f = spawnFleet();
    expect(await f.windows()).toEqual([]);
    const r = await f.spawnAgent([
      '--oneshot',
      '--id',
      'first',
      '--model',
      `script:${fixture('worker.yaml')}`,
      'do it',
    ]);
    expect(r.exitCode).toBe(0);
    const sessions = (await f.tmux.tmux('list-sessions', '-F', '#{session_name} #{session_attached}')).split('\n');
    expect(sessions).toHaveLength(1);
    expect(sessions[0]).toMatch(/^flotilla-flotilla-spawn-[a-z0-9-]+-[0-9a-f]{6} 0$/);
    const rec = f.record('first');
    expect(
      await f.tmux.tmux(
        'display-message',
        '-p',
        '-t',
        rec.tmux!.paneId,
        '#{session_name} #{window_name} #{remain-on-exit}',
      ),
    ).toBe(`${sessions[0]!.split(' ')[0]} first on`);
    // Made by the spawn, the session is the fleet's for a person (tmux/fleet-session.ts): their windows run the fleet
    // shell and are not this agent.
    const session = `=${sessions[0]!.split(' ')[0]}:`;
    expect(await f.tmux.tmux('show-options', '-v', '-t', session, 'default-command')).toContain(FLEET_SHELL);
    expect(await f.tmux.tmux('show-environment', '-t', session)).not.toMatch(/^FLOTILLA_AGENT_ID=/m);
    // A second spawn joins the same session.
    await f.spawnAgent(['--oneshot', '--id', 'second', '--model', `script:${fixture('worker.yaml')}`, 'do it']);
    expect(f.record('second').tmux?.sessionId).toBe(rec.tmux?.sessionId);
  });

  it('--session opens its own detached session; --background runs headless with output to its log', async () => {
    f = spawnFleet();
    await f.spawnAgent([
      '--session',
      '--oneshot',
      '--id',
      'own',
      '--model',
      `script:${fixture('worker.yaml')}`,
      'do it',
    ]);
    expect(await f.tmux.tmux('list-sessions', '-F', '#{session_name}')).toBe('own');
    const bg = await f.spawnAgent([
      '--background',
      '--wait',
      '--id',
      'bg',
      '--model',
      `script:${fixture('worker.yaml')}`,
      'do it',
    ]);
    expect(bg.stdout).toBe('Answer: result-of-bg');
    const rec = f.record('bg');
    expect(rec.mode).toBe('headless');
    expect(rec.background).toBe(true);
    expect(rec.tmux).toBeNull();
    expect(await f.windows()).toEqual(['own']);
    expect(readFileSync(f.layout.log('bg'), 'utf8')).toContain('[flotilla:agent id=bg');
  });

  it('inside a tmux session, the window opens in that session', async () => {
    f = spawnFleet();
    const env = Object.entries({ ...f.env, FLOTILLA_TMUX_SOCKET: '' }).flatMap(([k, v]) => ['-e', `${k}=${v}`]);
    await f.tmux.tmux('new-session', '-d', '-s', 'mine', '-x', '120', '-y', '30', '-c', f.project, ...env, 'sh');
    const cmd = `${process.execPath} ${CLI} spawn --oneshot --id inside --model script:${fixture('worker.yaml')} 'do it' > spawned.txt 2>&1; echo SPAWNED-$?`;
    await f.tmux.tmux('send-keys', '-t', 'mine', '-l', cmd);
    await f.tmux.tmux('send-keys', '-t', 'mine', 'Enter');
    await f.tmux.waitFor('mine:0', /SPAWNED-0/);
    const rec = f.record('inside');
    expect(await f.tmux.tmux('display-message', '-p', '-t', rec.tmux!.windowId, '#{session_name}')).toBe('mine');
    expect((await f.tmux.tmux('list-sessions', '-F', '#{session_name}')).split('\n')).toEqual(['mine']);
  });

  it('records a worktree and branch for --worktree', async () => {
    f = spawnFleet();
    const { execa } = await import('execa');
    const git = (...a: string[]) => execa('git', a, { cwd: f!.project });
    await git('init', '-q');
    await git('-c', 'user.email=t@t', '-c', 'user.name=t', 'commit', '-q', '--allow-empty', '-m', 'init');
    const r = await f.spawnAgent([
      '--worktree',
      '--wait',
      '--id',
      'wt',
      '--model',
      `script:${fixture('worker.yaml')}`,
      'do it',
    ]);
    expect(r.exitCode).toBe(0);
    const rec = f.record('wt');
    expect(rec.worktree).toBe(f.layout.worktree('wt'));
    expect(rec.cwd).toBe(rec.worktree);
    expect((await git('branch', '--list', 'flotilla/wt')).stdout).toContain('flotilla/wt');
    await eventually(async () => (await f!.flotilla(['cancel', 'wt'])).exitCode === 0, 10_000, 'cancel');
    const gc = await f.flotilla(['gc', '--json', '--keep-branches']);
    expect(JSON.parse(gc.stdout)).toMatchObject({ worktrees: [rec.worktree], branches: [] });
    expect(existsSync(rec.worktree!)).toBe(false);
    expect((await git('branch', '--list', 'flotilla/wt')).stdout).toContain('flotilla/wt');
  });
});
