import { execa, type ResultPromise } from 'execa';
import { existsSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { readProvenAnswer } from '../../src/fleet/answer-proof.js';
import { processStartTime } from '../../src/fleet/proc.js';
import { createRecord, updateRecord } from '../../src/fleet/registry.js';
import { deliver } from '../../src/inbox/deliver.js';
import { listNames, maildir } from '../../src/inbox/maildir.js';
import { tempFleet, type TempFleet } from '../helpers/fleet.js';
import { recordInput } from '../helpers/records.js';
import { eventually, tmuxServer, type TmuxServer } from '../helpers/tmux.js';
import { openDashboard } from '../helpers/dashboard.js';

let fleet: TempFleet | undefined;
let tmux: TmuxServer | undefined;
let sleeper: ResultPromise | undefined;
afterEach(async () => {
  sleeper?.kill('SIGKILL');
  await sleeper?.catch(() => undefined);
  sleeper = undefined;
  await tmux?.kill();
  fleet?.cleanup();
});

const DASH = 'dash:0';

/** `flotilla watch` in an 80×24 window of a private tmux server; returns the render counter. */
async function startDashboard(extraArgs: string[] = []): Promise<{ renders: () => number }> {
  fleet = tempFleet();
  tmux = tmuxServer();
  const stats = join(fleet.project, 'watch-stats.json');
  const env = {
    FLOTILLA_ROOT: fleet.layout.root,
    FLOTILLA_WATCH_STATS: stats,
    FLOTILLA_TMUX_SOCKET: tmux.socket,
    XDG_CONFIG_HOME: join(fleet.project, 'xdg'),
  };
  await openDashboard(tmux, {
    session: 'dash',
    width: 80,
    height: 24,
    cwd: fleet.project,
    env: env,
    args: [...extraArgs],
  });
  await tmux.waitFor(DASH, /No agents yet/);
  const renders = (): number =>
    existsSync(stats) ? (JSON.parse(readFileSync(stats, 'utf8')) as { renders: number }).renders : 0;
  return { renders };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** What the waiting harness does with an answer file: takes it only when the dashboard proves it wrote it. */
async function takeAnswer(requestId: string): Promise<Record<string, unknown>> {
  const file = fleet!.layout.approvalAnswer(requestId);
  const proven = await eventually(
    () => readProvenAnswer(fleet!.layout, file) ?? undefined,
    10_000,
    `the answer to ${requestId}`,
  );
  rmSync(file, { force: true });
  if (!proven.ok) throw new Error(`answer refused: ${proven.reason}`);
  expect(proven.route).toBe('dashboard');
  const { answerer: _answerer, ...body } = proven.body;
  return body;
}

describe('flotilla watch', () => {
  it('redraws on a registry or inbox change, and renders nothing while the fleet is quiet', async () => {
    const { renders } = await startDashboard(['--tick', '0.5']);
    const layout = fleet!.layout;

    // How fast a change shows is for `npm run bench`; here, that each one shows.
    createRecord(
      layout,
      recordInput('worker-abc123', {
        status: 'working',
        lastLine: 'reading src/app.ts',
        turns: 2,
        taskTurns: 2,
        startedAt: new Date().toISOString(),
      }),
    );
    await tmux!.waitFor(DASH, /worker-abc123 \*\s+working\s+2\/20.*reading src\/app/);

    createRecord(
      layout,
      recordInput('child-def456', { parentId: 'worker-abc123', rootId: 'worker-abc123', depth: 1, status: 'starting' }),
    );
    await tmux!.waitFor(DASH, /└ child-def456/);

    await deliver(layout, { from: 'human', to: 'worker-abc123', kind: 'message', body: 'hello' });
    await tmux!.waitFor(DASH, /worker-abc123 \*.*✉1/);

    const now = new Date().toISOString();
    updateRecord(layout, 'child-def456', { status: 'completed', finishedAt: now });
    updateRecord(layout, 'worker-abc123', {
      status: 'failed',
      exitReason: 'boom',
      finishedAt: now,
      lastLine: 'gave up',
    });
    await tmux!.waitFor(DASH, /worker-abc123 \*\s+failed[\s\S]*child-def456 \*\s+completed/);

    // Quiet fleet: every agent ended, so nothing on screen can change. Ticks (every 0.5 s
    // here) re-read the fleet but must not draw. (The last frame's count is written just
    // after the frame: give it a moment before taking it as the baseline.)
    await sleep(1000);
    const before = renders();
    expect(before).toBeGreaterThan(0);
    await sleep(3000);
    expect(renders()).toBe(before);

    // And it still wakes up for the next change.
    await deliver(layout, { from: 'human', to: 'child-def456', kind: 'message', body: 'late mail' });
    await tmux!.waitFor(DASH, /child-def456 \*.*✉1/);
    // The dashboard counts a frame just after writing it, and rewrites the stats file in place:
    // the screen can show the frame before the file says so, or while it is being rewritten.
    await eventually(() => renders() > before, 30_000, 'the late mail frame counted');
  });

  it('ends the record of an agent whose harness died, as every flotilla command does', async () => {
    await startDashboard();
    const gone = await execa('sh', ['-c', 'echo $$']);
    createRecord(
      fleet!.layout,
      recordInput('ghost-zzz999', {
        status: 'working',
        pid: Number(gone.stdout),
        pidStartTime: '1',
        startedAt: new Date().toISOString(),
      }),
    );
    await tmux!.waitFor(DASH, /ghost-zzz999 \*\s+crashed/, 5000);
  });

  it('sends a message, approves, denies, attaches and cancels from the keyboard', async () => {
    await startDashboard();
    const layout = fleet!.layout;
    // reject: false — the dashboard's cancel can end it before this test awaits it, and a
    // rejection nobody has awaited yet is an unhandled error that fails the run.
    sleeper = execa('sleep', ['120'], { reject: false });
    const pid = sleeper.pid!;
    const agentWin = (
      await tmux!.tmux(
        'new-window',
        '-d',
        '-P',
        '-F',
        '#{session_id} #{window_id} #{pane_id}',
        '-t',
        'dash:',
        '-n',
        'agentwin',
        'sleep',
        '120',
      )
    )
      .trim()
      .split(' ');
    createRecord(
      layout,
      recordInput('asker-aaa111', {
        status: 'waiting_approval',
        pid,
        pidStartTime: processStartTime(pid),
        startedAt: new Date().toISOString(),
        mode: 'interactive',
        tmux: { socket: tmux!.socket, sessionId: agentWin[0]!, windowId: agentWin[1]!, paneId: agentWin[2]! },
      }),
    );
    await tmux!.waitFor(DASH, /asker-aaa111 \*\s+approval\?/, 5000);

    // m: a prompt line, then the message arrives from `human`.
    await tmux!.tmux('send-keys', '-t', DASH, 'm');
    await tmux!.waitFor(DASH, /message to asker-aaa111/, 5000);
    await tmux!.tmux('send-keys', '-t', DASH, '-l', 'please stop soon');
    await tmux!.tmux('send-keys', '-t', DASH, 'Enter');
    await tmux!.waitFor(DASH, /sent \S+ to asker-aaa111/, 5000);
    const inbox = maildir(layout, 'asker-aaa111').new;
    const [file] = listNames(inbox);
    const text = readFileSync(join(inbox, file!), 'utf8');
    expect(text).toMatch(/from: human/);
    expect(text).toContain('please stop soon');

    // a: the pending request is answered like `flotilla approve` does.
    await deliver(layout, {
      from: 'asker-aaa111',
      to: 'human',
      kind: 'approval_request',
      request_id: 'req1aaaaaaaa',
      tool: 'shell',
      priority: 'high',
      summary: 'asker-aaa111 asks to run $ npm publish',
      body: 'x',
    });
    await tmux!.waitFor(DASH, /Pending approvals[\s\S]*\$ npm publish/, 5000);
    await tmux!.tmux('send-keys', '-t', DASH, 'a');
    // This test plays the waiting harness: the answer is proven to come from the dashboard, then taken.
    expect(await takeAnswer('req1aaaaaaaa')).toEqual({ requestId: 'req1aaaaaaaa', decision: 'approve', scope: 'once' });
    // Waiting for either outcome makes a failure show the dashboard's reason.
    expect(await tmux!.waitFor(DASH, /(approved|cannot answer) req1aaaaaaaa.*/, 5000)).toMatch(/approved req1aaaaaaaa/);

    // d: a reason, then the denial.
    await sleep(5);
    await deliver(layout, {
      from: 'asker-aaa111',
      to: 'human',
      kind: 'approval_request',
      request_id: 'req2aaaaaaaa',
      tool: 'shell',
      priority: 'high',
      summary: 'asker-aaa111 asks to run $ rm -r build',
      body: 'x',
    });
    await tmux!.waitFor(DASH, /\$ rm -r build/, 5000);
    await tmux!.tmux('send-keys', '-t', DASH, 'd');
    await tmux!.waitFor(DASH, /deny req2aaaaaaaa/, 5000);
    await tmux!.tmux('send-keys', '-t', DASH, '-l', 'not now');
    await tmux!.tmux('send-keys', '-t', DASH, 'Enter');
    expect(await takeAnswer('req2aaaaaaaa')).toEqual({
      requestId: 'req2aaaaaaaa',
      decision: 'deny',
      reason: 'not now',
    });
    expect(await tmux!.waitFor(DASH, /(denied|cannot answer) req2aaaaaaaa.*/, 5000)).toMatch(/denied req2aaaaaaaa/);

    // Enter: the agent's window is selected.
    await tmux!.tmux('send-keys', '-t', DASH, 'Enter');
    await eventually(
      async () => (await tmux!.tmux('display-message', '-p', '-t', 'dash', '#{window_name}')).trim() === 'agentwin',
      5000,
      'agent window selected',
    );
    await tmux!.tmux('select-window', '-t', DASH);

    // c, then y: SIGTERM to the agent's process (`flotilla cancel`).
    await tmux!.tmux('send-keys', '-t', DASH, 'c');
    await tmux!.waitFor(DASH, /cancel asker-aaa111\? \(y\/n\)/, 5000);
    await tmux!.tmux('send-keys', '-t', DASH, 'y');
    expect((await sleeper).signal).toBe('SIGTERM');
    await tmux!.waitFor(DASH, /cancelled asker-aaa111/, 10_000);

    // q quits.
    await tmux!.tmux('send-keys', '-t', DASH, 'q');
    // Its pane is gone (or dead): a live one reads `0node`.
    await eventually(
      async () =>
        /^(gone|1)/.test(
          (
            await tmux!.tmux('list-panes', '-t', DASH, '-F', '#{pane_dead}#{pane_current_command}').catch(() => 'gone')
          ).trim(),
        ) || undefined,
      30_000,
      'dashboard exit',
    );
  });
});
