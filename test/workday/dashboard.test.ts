import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createRecord } from '../../src/fleet/registry.js';
import { CLI } from '../helpers/cli.js';
import { tempFleet, type TempFleet } from '../helpers/fleet.js';
import { recordInput } from '../helpers/records.js';
import { eventually, tmuxServer, type TmuxServer } from '../helpers/tmux.js';

/** The dashboard takes every key of a read, and redraws whole after a resize. */

let fleet: TempFleet | undefined;
let tmux: TmuxServer | undefined;
afterEach(async () => {
  await tmux?.kill();
  fleet?.cleanup();
});

const DASH = 'dash:0';

/** `around`: a command `flotilla watch` runs under, its command line appended. */
async function dashboardWithFour(around: string[] = []): Promise<void> {
  fleet = tempFleet();
  tmux = tmuxServer();
  const t0 = Date.now();
  // Created oldest first: the tree lists roots in that order.
  for (const [i, id] of ['alpha-aaaaaa', 'bravo-bbbbbb', 'charl-cccccc', 'delta-dddddd'].entries()) {
    createRecord(
      fleet.layout,
      recordInput(id, { status: 'idle', createdAt: new Date(t0 + i * 1000).toISOString(), lastLine: `line of ${id}` }),
    );
  }
  const env = {
    FLOTILLA_ROOT: fleet.layout.root,
    FLOTILLA_TMUX_SOCKET: tmux.socket,
    XDG_CONFIG_HOME: join(fleet.project, 'xdg'),
  };
  const envArgs = Object.entries(env).flatMap(([k, v]) => ['-e', `${k}=${v}`]);
  await tmux.tmux(
    'new-session',
    '-d',
    '-s',
    'dash',
    '-x',
    '80',
    '-y',
    '24',
    '-c',
    fleet.project,
    ...envArgs,
    ...around,
    process.execPath,
    CLI,
    'watch',
  );
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

  it('closing its window ends the dashboard with status 0, not an abort of Node on the terminal gone', async () => {
    // The pane's sh outlives the window (it ignores SIGHUP) to write down how the dashboard ended.
    await dashboardWithFour(['/bin/sh', '-c', 'trap "" HUP; "$@"; echo "$?" > exit-status', 'sh']);
    await tmux!.tmux('new-session', '-d', '-s', 'keep');
    // Its terminal's end (EIO on its input) ends the dashboard, as would the SIGHUP it gets outside this sh.
    await tmux!.tmux('kill-session', '-t', 'dash');
    const status = join(fleet!.project, 'exit-status');
    await eventually(() => existsSync(status), 30_000, 'the dashboard to exit');
    // Node 20 aborted here as it reset the terminal gone: 134 (SIGABRT), at times 139 (SIGSEGV).
    expect(readFileSync(status, 'utf8').trim()).toBe('0');
  });

  it('after each tmux resize the screen holds one whole frame that fits, and nothing of the old one', async () => {
    await dashboardWithFour();
    const ids = ['alpha-aaaaaa', 'bravo-bbbbbb', 'charl-cccccc', 'delta-dddddd'];
    // Shrink, grow, height only, width only, very small, back: each leaves a different old frame behind without the
    // fix.
    for (const [w, h] of [
      [60, 16],
      [120, 40],
      [120, 14],
      [70, 14],
      [44, 12],
      [100, 30],
    ] as const) {
      await tmux!.tmux('resize-window', '-t', DASH, '-x', String(w), '-y', String(h));
      const screen = await eventually(
        async () => {
          const size = (await tmux!.tmux('display-message', '-p', '-t', DASH, '#{pane_width} #{pane_height}')).trim();
          if (size !== `${w} ${h}`) return undefined;
          const text = await tmux!.tmux('capture-pane', '-p', '-t', DASH);
          return wholeFrame(text, w, h, ids) ? text : undefined;
        },
        30_000,
        `one whole ${w}x${h} frame`,
      ).catch(async (err: Error) => {
        throw new Error(`${err.message}; last screen:\n${await tmux!.tmux('capture-pane', '-p', '-t', DASH)}`);
      });
      expect(screen.split('\n')[0]).toMatch(/4 agents, 0 working/);
    }
    // Still alive and answering keys at the last size.
    await tmux!.tmux('send-keys', '-t', DASH, 'j');
    await tmux!.waitFor(DASH, /› bravo-bbbbbb/, 15_000);
  }, 120_000);
});

/**
 * True when the visible screen is one dashboard frame for a w×h window: the title first and
 * once, each agent's row once, the key help once and last, no line wider than the window.
 */
function wholeFrame(text: string, w: number, h: number, ids: readonly string[]): boolean {
  const lines = text.replace(/\n+$/, '').split('\n');
  if (lines.length > h || lines.some((l) => [...l].length > w)) return false;
  const count = (re: RegExp) => lines.filter((l) => re.test(l)).length;
  if (!/4 agents, 0 working/.test(lines[0] ?? '') || count(/agents, \d+ working/) !== 1) return false;
  if (!/n next/.test(lines.at(-1) ?? '') || count(/n next/) !== 1) return false;
  // Rows: the selected one and the rest; tiny windows scroll, so each shown id is shown once.
  // Narrow windows cut ids (`alpha-aaa…`): the first nine characters always show.
  const rows = ids.map((id) => count(new RegExp(`^[› ] ${id.slice(0, 9)}`)));
  return rows.every((n) => n <= 1) && rows[0] === 1;
}
