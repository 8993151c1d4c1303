import { execa, type ResultPromise } from 'execa';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { processStartTime } from '../../src/fleet/proc.js';
import { createRecord, updateRecord } from '../../src/fleet/registry.js';
import { deliver } from '../../src/inbox/deliver.js';
import { fleetSessionName } from '../../src/tmux/session-name.js';
import { CLI } from '../helpers/cli.js';
import { tempFleet, type TempFleet } from '../helpers/fleet.js';
import { recordInput } from '../helpers/records.js';
import { eventually, tmuxServer, type TmuxServer } from '../helpers/tmux.js';
import { spawnFleet, type SpawnFleet } from '../spawn/helpers.js';

/**
 * Attention (design §2): what needs a person is marked and listed first in the dashboard,
 * `n` walks it, `flotilla next` switches a real tmux client to it, the fleet session's
 * status line counts it, and the bell rings for a new one. Real tmux on private sockets.
 */

let fleet: TempFleet | undefined;
let servers: TmuxServer[] = [];
let sleepers: ResultPromise[] = [];
let spawned: SpawnFleet | undefined;
afterEach(async () => {
  for (const s of sleepers) s.kill('SIGKILL');
  await Promise.all(sleepers.map((s) => s.catch(() => undefined)));
  sleepers = [];
  for (const s of servers) await s.kill();
  servers = [];
  fleet?.cleanup();
  fleet = undefined;
  await spawned?.close();
  spawned = undefined;
});

/** A live process for a record to point at (its pid and start time), so nothing reaps it. */
function liveProcess(): { pid: number; pidStartTime: string | null } {
  const p = execa('sleep', ['300'], { reject: false });
  sleepers.push(p);
  return { pid: p.pid!, pidStartTime: processStartTime(p.pid!) };
}

interface Scene {
  inner: TmuxServer;
  session: string;
  env: Record<string, string>;
  /** Window ids of the agents' windows, by agent id. */
  windows: Record<string, string>;
}

/**
 * The fleet session (named as `flotilla up` names it) with the dashboard in window 0, and
 * three agents with windows of their own: one working, one waiting on an approval, one that failed.
 */
async function scene(): Promise<Scene> {
  fleet = tempFleet();
  const inner = tmuxServer();
  servers.push(inner);
  const session = fleetSessionName('flotilla', fleet.project);
  const env = {
    FLOTILLA_ROOT: fleet.layout.root,
    FLOTILLA_TMUX_SOCKET: inner.socket,
    XDG_CONFIG_HOME: join(fleet.project, 'xdg'),
    LANG: 'C.UTF-8',
  };
  const envArgs = Object.entries(env).flatMap(([k, v]) => ['-e', `${k}=${v}`]);
  await inner.tmux(
    'new-session',
    '-d',
    '-s',
    session,
    '-n',
    'dashboard',
    '-x',
    '100',
    '-y',
    '30',
    '-c',
    fleet.project,
    ...envArgs,
    process.execPath,
    CLI,
    'watch',
  );
  await inner.waitFor(`=${session}:dashboard`, /No agents yet/);
  const windows: Record<string, string> = {};
  const layout = fleet.layout;
  const place = async (id: string) => {
    const [sessionId, windowId, paneId] = (
      await inner.tmux(
        'new-window',
        '-d',
        '-P',
        '-F',
        '#{session_id} #{window_id} #{pane_id}',
        '-t',
        `=${session}:`,
        '-n',
        id,
        'sleep',
        '300',
      )
    )
      .trim()
      .split(' ');
    windows[id] = windowId!;
    return { socket: inner.socket, sessionId: sessionId!, windowId: windowId!, paneId: paneId! };
  };
  const now = new Date().toISOString();
  createRecord(
    layout,
    recordInput('calm-aaaaaa', {
      status: 'working',
      startedAt: now,
      createdAt: now,
      mode: 'interactive',
      ...liveProcess(),
      tmux: await place('calm-aaaaaa'),
    }),
  );
  // Created working, then failed, as a harness does (an ended agent is found through the ended log).
  createRecord(
    layout,
    recordInput('broke-bbbbbb', {
      status: 'working',
      startedAt: now,
      createdAt: new Date(Date.now() + 1).toISOString(),
      tmux: await place('broke-bbbbbb'),
    }),
  );
  updateRecord(layout, 'broke-bbbbbb', { status: 'failed', exitReason: 'model error: 500', finishedAt: now });
  createRecord(
    layout,
    recordInput('asks-cccccc', {
      status: 'waiting_approval',
      startedAt: now,
      createdAt: new Date(Date.now() + 2).toISOString(),
      mode: 'interactive',
      ...liveProcess(),
      tmux: await place('asks-cccccc'),
    }),
  );
  await deliver(layout, {
    from: 'asks-cccccc',
    to: 'human',
    kind: 'approval_request',
    request_id: 'req1cccccccc',
    tool: 'shell',
    priority: 'high',
    summary: 'asks-cccccc asks to run $ npm publish',
    body: 'x',
  });
  return { inner, session, env, windows };
}

/** The dashboard's screen, one string. */
const screen = (s: Scene) => s.inner.capture(`=${s.session}:dashboard`);
const needsOption = async (s: Scene) =>
  (await s.inner.tmux('display-message', '-p', '-t', `=${s.session}:dashboard`, '#{@flotilla_needs}')).trim();

describe('the dashboard points at what needs you', () => {
  it('marks and lists first the approval and the failure, counts them in the status line, walks them with n, rings for a new one, and shows every key on ?', async () => {
    const s = await scene();
    const text = await s.inner.waitFor(`=${s.session}:dashboard`, /2 need you[\s\S]*calm-aaaaaa/);
    // Approval first, then the failure, then the rest — whatever their tree order (calm is oldest).
    const at = (id: string) => text.indexOf(id);
    expect(at('asks-cccccc')).toBeLessThan(at('broke-bbbbbb'));
    expect(at('broke-bbbbbb')).toBeLessThan(at('calm-aaaaaa'));
    expect(text).toMatch(/!asks-cccccc \*\s+approval\?/);
    expect(text).toMatch(/!broke-bbbbbb \*\s+failed/);
    expect(text).toMatch(/ {2}calm-aaaaaa \*\s+working/);

    // The fleet session's status line shows the count (tmux expands it from the session option).
    await eventually(async () => (await needsOption(s)) === '⚑ 2 need you', 30_000, 'the status count');
    const statusRight = await s.inner.tmux(
      'display-message',
      '-p',
      '-t',
      `=${s.session}:dashboard`,
      '#{T:status-right}',
    );
    expect(statusRight).toContain('⚑ 2 need you');
    // They appeared while the dashboard ran: the bell rang (tmux flags the dashboard's window).
    const bell = async () =>
      (await s.inner.tmux('display-message', '-p', '-t', `=${s.session}:dashboard`, '#{window_bell_flag}')).trim();
    await eventually(async () => (await bell()) === '1', 30_000, 'the first bell');
    // Going to another window and back clears tmux's flag, so the next ring shows.
    await s.inner.tmux('select-window', '-t', `=${s.session}:calm-aaaaaa`);
    await s.inner.tmux('select-window', '-t', `=${s.session}:dashboard`);
    expect(await bell()).toBe('0');

    // n: the approval first, with what to do; then the failure, which counts as seen.
    await s.inner.tmux('send-keys', '-t', `=${s.session}:dashboard`, 'n');
    await s.inner.waitFor(
      `=${s.session}:dashboard`,
      /›!asks-cccccc[\s\S]*asks-cccccc approve\?: answer with flotilla approve\|deny req1cccccccc/,
    );
    await s.inner.tmux('send-keys', '-t', `=${s.session}:dashboard`, 'n');
    await s.inner.waitFor(`=${s.session}:dashboard`, /broke-bbbbbb failed: model error: 500/);
    await eventually(async () => (await needsOption(s)) === '⚑ 1 needs you', 30_000, 'the failure seen');
    expect(await screen(s)).toMatch(/1 needs you \(n\)/);
    // A need going away rings nothing.
    expect(await bell()).toBe('0');
    // The message line clears by itself after a few seconds.
    await eventually(
      async () => !/model error: 500\s*$/m.test((await screen(s)).split('\n').slice(-3).join('\n')),
      30_000,
      'the message line to clear',
    );

    // A new failure appears: the bell rings (tmux flags the window) and the count goes up.
    updateRecord(fleet!.layout, 'calm-aaaaaa', {
      status: 'crashed',
      exitReason: 'killed',
      finishedAt: new Date().toISOString(),
    });
    await eventually(async () => (await needsOption(s)) === '⚑ 2 need you', 30_000, 'the count after a crash');
    await eventually(async () => (await bell()) === '1', 30_000, 'the bell for the crash');

    // ?: every key; any key goes back.
    await s.inner.tmux('send-keys', '-t', `=${s.session}:dashboard`, '?');
    const help = await s.inner.waitFor(`=${s.session}:dashboard`, /Keys[\s\S]*next agent that needs you/);
    for (const key of ['PgUp PgDn', 'Ctrl-C', 'approve the agent']) expect(help).toContain(key);
    await s.inner.tmux('send-keys', '-t', `=${s.session}:dashboard`, 'x');
    await s.inner.waitFor(`=${s.session}:dashboard`, /AGENT\s+STATE/);
  });
});

describe('flotilla next', () => {
  it('switches an attached tmux client to the next agent that needs you, walks on, and says so plainly when nothing does or no client is there', async () => {
    const s = await scene();
    // A real client: a terminal (a pane of another private server) attached to the fleet session.
    const outer = tmuxServer();
    servers.push(outer);
    await outer.tmux(
      'new-session',
      '-d',
      '-s',
      'term',
      '-x',
      '120',
      '-y',
      '40',
      'tmux',
      '-L',
      s.inner.socket,
      'attach',
      '-t',
      `=${s.session}:dashboard`,
    );
    const clientWindow = async () => (await s.inner.tmux('list-clients', '-F', '#{window_id}')).trim();
    await eventually(async () => (await clientWindow()) !== '', 30_000, 'the client to attach');
    const next = () =>
      execa(process.execPath, [CLI, 'next'], {
        env: { ...s.env, PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: join(fleet!.project, 'home') },
        extendEnv: false,
        reject: false,
        cwd: fleet!.project,
      });

    let r = await next();
    expect(r.exitCode, r.stderr).toBe(0);
    expect(r.stdout).toBe(
      '→ asks-cccccc approve?: answer with flotilla approve|deny req1cccccccc, a/d in the dashboard, y/n in its window (1 more needs you)',
    );
    expect(await clientWindow()).toBe(s.windows['asks-cccccc']);

    r = await next();
    expect(r.exitCode, r.stderr).toBe(0);
    expect(r.stdout).toBe(
      "→ broke-bbbbbb failed: model error: 500 — read it with 'flotilla transcript broke-bbbbbb' (1 more needs you)",
    );
    expect(await clientWindow()).toBe(s.windows['broke-bbbbbb']);
    // Looked at: the failure no longer needs you, so next goes back to the approval.
    r = await next();
    expect(r.stdout).toBe(
      '→ asks-cccccc approve?: answer with flotilla approve|deny req1cccccccc, a/d in the dashboard, y/n in its window',
    );
    expect(await clientWindow()).toBe(s.windows['asks-cccccc']);

    // The approval is settled: nothing needs you, and the client stays where it is.
    updateRecord(fleet!.layout, 'asks-cccccc', { status: 'working' });
    r = await next();
    expect(r.exitCode).toBe(0);
    expect(r.stdout).toBe('nothing needs you (3 agents)');
    expect(r.stderr).toBe('');

    // Something needs you but no client is attached: exit 1, one line saying how to attach.
    updateRecord(fleet!.layout, 'asks-cccccc', { status: 'waiting_approval' });
    await outer.kill();
    await eventually(
      async () => (await s.inner.tmux('list-clients', '-F', '#{client_name}')).trim() === '',
      30_000,
      'the client to go',
    );
    r = await next();
    expect(r.exitCode).toBe(1);
    expect(r.stdout).toBe('');
    expect(r.stderr.trimEnd().split('\n')).toHaveLength(1);
    expect(r.stderr).toMatch(
      new RegExp(
        `^flotilla: asks-cccccc approve\\?: .* — no tmux client to switch: attach with 'tmux -L ${s.inner.socket} attach -t ${s.session}', then run flotilla next again$`,
      ),
    );
  });
});

describe('flotilla status shows the line for running slots', () => {
  it('a spawn-agent --queue waiting for a slot is listed with its place, in text and JSON, until it starts', async () => {
    spawned = spawnFleet({ config: 'limits:\n  max_running: 1\n', definitions: { busy: '../workday/busy.yaml' } });
    const f = spawned;
    expect((await f.spawnAgent(['--agent', 'busy', '--id', 'holder', 'first task'])).exitCode).toBe(0);
    await eventually(
      () => f.record('holder').status === 'idle' && f.record('holder').lastTask?.status === 'completed',
      60_000,
      'the first task',
    );
    // The holder takes the one slot with work that lasts until the test releases it.
    expect((await f.flotilla(['send', 'holder', 'please do the long job'])).exitCode).toBe(0);
    await eventually(() => f.record('holder').status === 'working', 30_000, 'the long job');
    const waiting = f.spawnAgent(['--queue', '--agent', 'busy', '--id', 'latecomer', 'second task']);
    await eventually(
      async () => /latecomer/.test((await f.flotilla(['status'])).stdout),
      30_000,
      'the queued spawn in status',
    );
    const text = await f.flotilla(['status']);
    expect(text.stdout).toMatch(
      /In line for a running slot \(limits\.max_running 1\), not started yet:\n {2}#1 {2}latecomer {2}spawn-agent --queue, pid \d+/,
    );
    const json = JSON.parse((await f.flotilla(['status', '--json'])).stdout) as {
      id: string;
      status: string;
      queuePosition?: number;
      started?: boolean;
    }[];
    expect(json.find((e) => e.id === 'latecomer')).toMatchObject({
      status: 'queued',
      queuePosition: 1,
      started: false,
    });

    writeFileSync(join(f.project, 'long-job.release'), '');
    expect((await waiting).exitCode).toBe(0);
    await eventually(async () => !/In line/.test((await f.flotilla(['status'])).stdout), 30_000, 'the line to empty');
  });
});
