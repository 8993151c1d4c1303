import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { processStartTime } from '../../src/fleet/proc.js';
import { createRecord } from '../../src/fleet/registry.js';
import { addTask, claimTask } from '../../src/tasks/board.js';
import { tempFleet, type TempFleet } from '../helpers/fleet.js';
import { recordInput } from '../helpers/records.js';
import { eventually, tmuxServer, type TmuxServer } from '../helpers/tmux.js';
import { openDashboard } from '../helpers/dashboard.js';

/**
 * The dashboard's tasks view (`t`, README "The dashboard"): `flotilla watch` in a private tmux
 * server shows a claimed task with its claimant and an open one with its blocker, and Enter
 * on the claimed task selects the claimant's window.
 */

let fleet: TempFleet | undefined;
let tmux: TmuxServer | undefined;
afterEach(async () => {
  await tmux?.kill();
  fleet?.cleanup();
});

const DASH = 'dash:0';

describe('the tasks view', () => {
  it("shows each task with status, claimant, blockers and age; Enter goes to the claimant's window", async () => {
    fleet = tempFleet();
    tmux = tmuxServer();
    const env = {
      FLOTILLA_ROOT: fleet.layout.root,
      FLOTILLA_TMUX_SOCKET: tmux.socket,
      XDG_CONFIG_HOME: join(fleet.project, 'xdg'),
    };
    await openDashboard(tmux, { session: 'dash', width: 110, height: 24, cwd: fleet.project, env: env });
    await tmux.waitFor(DASH, /No agents yet/);

    // The claimant: a live process in its own window of the same server, registered as an agent.
    await tmux.tmux('new-window', '-d', '-t', 'dash', '-n', 'worker', 'sh -c "while :; do sleep 1; done"');
    const [sessionId, windowId, paneId, pid] = (
      await tmux.tmux('display-message', '-p', '-t', 'dash:worker', '#{session_id} #{window_id} #{pane_id} #{pane_pid}')
    )
      .trim()
      .split(' ');
    createRecord(
      fleet.layout,
      recordInput('worker-abc123', {
        status: 'working',
        pid: Number(pid),
        pidStartTime: processStartTime(Number(pid)),
        mode: 'interactive',
        tmux: { socket: tmux.socket, sessionId: sessionId!, windowId: windowId!, paneId: paneId! },
        startedAt: new Date().toISOString(),
      }),
    );
    await addTask(fleet.layout, 'fleet', { title: 'write the parser' }, 'human');
    await addTask(fleet.layout, 'fleet', { title: 'test the parser', blockedBy: ['t1'] }, 'human');
    await claimTask(fleet.layout, 'fleet', 't1', 'worker-abc123');
    await tmux.waitFor(DASH, /worker-abc123/);

    await tmux.tmux('send-keys', '-t', DASH, 't');
    const screen = await tmux.waitFor(DASH, /claimed\s+fleet\/t1\s+worker-abc123\s+-\s+\d+s\s+write the parser/);
    expect(screen).toMatch(/open\s+fleet\/t2\s+-\s+t1\s+\d+s\s+test the parser/);
    expect(screen).toMatch(/tasks\s+1 open, 1 claimed, 0 done/);
    // The first row (claim order) is selected: Enter goes to its claimant.
    expect(screen).toMatch(/›\s+claimed\s+fleet\/t1/);
    await tmux.tmux('send-keys', '-t', DASH, 'Enter');
    await eventually(
      async () => (await tmux!.tmux('display-message', '-p', '-t', 'dash', '#{window_id}')).trim() === windowId,
      30_000,
      "the claimant's window selected",
    );

    // On an open task there is no claimant to go to: it says so, and stays.
    await tmux.tmux('select-window', '-t', DASH);
    await tmux.tmux('send-keys', '-t', DASH, 'j');
    await tmux.waitFor(DASH, /›\s+open\s+fleet\/t2/);
    await tmux.tmux('send-keys', '-t', DASH, 'Enter');
    await tmux.waitFor(DASH, /t2 is open: no claimant's window to go to/);
    expect((await tmux.tmux('display-message', '-p', '-t', 'dash', '#{window_index}')).trim()).toBe('0');

    // t goes back to the agents.
    await tmux.tmux('send-keys', '-t', DASH, 't');
    await tmux.waitFor(DASH, /AGENT\s+STATE/);
  });
});
