import { writeFileSync } from 'node:fs';
import { render } from 'ink';
import type { Config } from '../config/schema.js';
import type { Layout } from '../layout/layout.js';
import { fleetActions } from './actions.js';
import { Dashboard } from './app.js';
import { FleetFeed } from './feed.js';
import { FrameScreen } from './screen.js';

/**
 * `flotilla watch`: the live dashboard (§2). Loaded only by the watch command, so no other
 * command pays for Ink and React. With `statsFile` (FLOTILLA_WATCH_STATS) every render
 * writes `{"renders": N}` there, which is how tests check that a quiet fleet draws nothing.
 */
export interface WatchOptions {
  layout: Layout;
  config: Config;
  socket: string | null;
  title: string;
  statsFile?: string | undefined;
  tickMs?: number | undefined;
}

export async function runWatch(opts: WatchOptions): Promise<number> {
  if (!process.stdin.isTTY || !process.stdout.isTTY) {
    const { UsageError } = await import('../errors.js');
    throw new UsageError("flotilla watch needs a terminal — run it in tmux (flotilla up opens it there), or use 'flotilla status' for a one-off table");
  }
  const { reconcileDead } = await import('../lifecycle/reconcile.js');
  const feed = new FleetFeed(opts.layout, { tickMs: opts.tickMs, onDead: () => reconcileDead(opts.layout, opts.config) });
  let renders = 0;
  const onRender = opts.statsFile
    ? (): void => {
      renders++;
      try {
        writeFileSync(opts.statsFile!, JSON.stringify({ renders, pid: process.pid }) + '\n');
      } catch {
        // Stats are for tests; never let them stop the dashboard.
      }
    }
    : undefined;
  feed.start();
  // Frames drawn whole from the top, so a resize leaves nothing of the old one (screen.ts).
  const screen = new FrameScreen(process.stdout);
  screen.open();
  const app = render(<Dashboard feed={feed} actions={fleetActions(opts.layout, opts.config, { socket: opts.socket })} title={opts.title} />, {
    stdout: screen as unknown as NodeJS.WriteStream,
    exitOnCtrlC: true,
    ...(onRender ? { onRender } : {}),
  });
  // tmux closing the window sends SIGHUP: leave quietly.
  const stop = (): void => app.unmount();
  process.once('SIGHUP', stop);
  process.once('SIGTERM', stop);
  try {
    await app.waitUntilExit();
  } finally {
    feed.close();
    screen.close();
  }
  return 0;
}
