import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createRecord } from '../../src/fleet/registry.js';
import { CLI } from '../helpers/cli.js';
import { tempFleet, type TempFleet } from '../helpers/fleet.js';
import { recordInput } from '../helpers/records.js';
import { tmuxServer, type TmuxServer } from '../helpers/tmux.js';

/** Issue 14: the dashboard takes every key of a read. */

let fleet: TempFleet | undefined;
let tmux: TmuxServer | undefined;
afterEach(async () => {
  await tmux?.kill();
  fleet?.cleanup();
});

const DASH = 'dash:0';

async function dashboardWithFour(): Promise<void> {
  fleet = tempFleet();
  tmux = tmuxServer();
  const t0 = Date.now();
  // Created oldest first: the tree lists roots in that order.
  for (const [i, id] of ['alpha-aaaaaa', 'bravo-bbbbbb', 'charl-cccccc', 'delta-dddddd'].entries()) {
    createRecord(fleet.layout, recordInput(id, { status: 'idle', createdAt: new Date(t0 + i * 1000).toISOString(), lastLine: `line of ${id}` }));
  }
  const env = { FLOTILLA_ROOT: fleet.layout.root, FLOTILLA_TMUX_SOCKET: tmux.socket, XDG_CONFIG_HOME: join(fleet.project, 'xdg') };
  const envArgs = Object.entries(env).flatMap(([k, v]) => ['-e', `${k}=${v}`]);
  await tmux.tmux('new-session', '-d', '-s', 'dash', '-x', '80', '-y', '24', '-c', fleet.project, ...envArgs, process.execPath, CLI, 'watch');
  await tmux.waitFor(DASH, /› alpha-aaaaaa[\s\S]*delta-dddddd/);
}

describe('dashboard keys and redraws', () => {
  it('tmux send-keys jj moves the selection two rows; kk moves it back', async () => {
    await dashboardWithFour();
    await tmux!.tmux('send-keys', '-t', DASH, 'jj');
    const screen = await tmux!.waitFor(DASH, /› charl-cccccc/, 5_000);
    expect(screen).not.toMatch(/› (alpha|bravo|delta)/);
    await tmux!.tmux('send-keys', '-t', DASH, 'kk');
    await tmux!.waitFor(DASH, /› alpha-aaaaaa/, 5_000);
  });
});
