import { writeFileSync } from 'node:fs';
import type { Config } from '../config/schema.js';
import type { Layout } from '../layout/layout.js';
import { fleetActions } from './actions.js';
import { Dashboard } from './dashboard.js';
import { FleetFeed } from './feed.js';
import { AttentionSignal } from './signal.js';
import { liveSources, type LiveSources } from './live-sources.js';
import type { OtherHost } from './host-rows.js';
import type { HostsPoll } from './hosts-poll.js';
import type { TeamPoll } from './team-poll.js';

/**
 * `flotilla watch`: the live dashboard (§2). Loaded only by the watch command. With
 * `statsFile` (FLOTILLA_WATCH_STATS) every frame written bumps `{"renders": N}` there, which
 * is how tests check that a quiet fleet draws nothing.
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
    throw new UsageError(
      "flotilla watch needs a terminal — run it in tmux (flotilla up opens it there), or use 'flotilla status' for a one-off table",
    );
  }
  // Ending dead harnesses' records is only needed once one is seen; it loads on first use.
  const onDead = async (): Promise<unknown> =>
    (await import('../lifecycle/reconcile.js')).reconcileDead(opts.layout, opts.config);
  // On a bus, every other host's agents too (§17.6); on maildir none of the bus code loads.
  // (The poll starts after the feed exists: its first answer refreshes the feed.)
  const hosts = opts.config.fleet.bus === 'maildir' ? null : await hostsOnBus(opts, () => feed.refresh());
  // On a bus the boards and leases are the fleet's, in its buckets (team-poll.ts); read before the first frame.
  // (Its first read comes before the feed exists: the feed reads it as it starts.)
  let refresh = (): void => undefined;
  const team = opts.config.fleet.bus === 'maildir' ? null : await teamOnBus(opts, () => refresh());
  const feed = new FleetFeed(opts.layout, {
    tickMs: opts.tickMs,
    onDead,
    ...(hosts ? { hosts: hosts.source } : {}),
    ...(team ? { team } : {}),
  });
  refresh = () => feed.refresh();
  await feed.ready();
  let renders = 0;
  const onDraw = opts.statsFile
    ? (): void => {
        renders++;
        try {
          writeFileSync(opts.statsFile!, JSON.stringify({ renders, pid: process.pid }) + '\n');
        } catch {
          // Stats are for tests; never let them stop the dashboard.
        }
      }
    : undefined;
  const env = process.env;
  // The tmux status count and the bell (signal.ts); tmux's client loads after the first frame.
  const [{ Tmux }, { fleetSessionName }] = await Promise.all([
    import('../tmux/client.js'),
    import('../tmux/session-name.js'),
  ]);
  const signal = new AttentionSignal({
    session: fleetSessionName(opts.config.tmux.session_prefix, opts.layout.project),
    tmux: new Tmux({ socket: opts.socket }),
    ring: opts.config.watch.bell ? () => process.stdout.write('\u0007') : null,
  });
  // Config and definitions go live after the first frame (its budget is 250 ms, §14).
  let live: LiveSources | undefined;
  const dashboard = new Dashboard({
    onSnapshot: (s) => signal.update(s),
    feed,
    title: opts.title,
    actions: fleetActions(opts.layout, () => live?.config() ?? opts.config, { socket: opts.socket }),
    input: process.stdin,
    output: process.stdout,
    // https://no-color.org, and terminals that cannot show styles.
    styles: !env.NO_COLOR && env.TERM !== 'dumb',
    ...(onDraw ? { onDraw } : {}),
  });
  // tmux closing the window sends SIGHUP: leave quietly.
  const signals = ['SIGHUP', 'SIGTERM', 'SIGINT'] as const;
  for (const s of signals) process.on(s, dashboard.stop);
  try {
    // The first frame from the snapshot already read, then the file watches.
    const done = dashboard.start();
    feed.start();
    hosts?.poll.start();
    team?.start();
    live = await liveSources(opts.layout, opts.config, (notice) => dashboard.setNotice(notice));
    await done;
  } finally {
    for (const s of signals) process.off(s, dashboard.stop);
    hosts?.poll.close();
    team?.close();
    feed.close();
    await signal.close();
    live?.close();
  }
  return 0;
}

/** The other hosts' agents, read from the bus every heartbeat (or every tick, when ticks are faster). */
async function hostsOnBus(
  opts: WatchOptions,
  changed: () => void,
): Promise<{ poll: HostsPoll; source: { self: string; current: () => readonly OtherHost[] | null } }> {
  const [{ busFor }, { selfHost }, { HostsPoll }, { BEAT_MS }] = await Promise.all([
    import('../bus/open.js'),
    import('../hosts/self.js'),
    import('./hosts-poll.js'),
    import('../bus/presence.js'),
  ]);
  const self = selfHost(opts.config.fleet);
  const poll = new HostsPoll(
    busFor(opts.layout, opts.config),
    self,
    changed,
    Math.min(BEAT_MS, opts.tickMs ?? BEAT_MS),
  );
  return { poll, source: { self, current: () => poll.current } };
}

/**
 * How often the dashboard reads the fleet's boards and leases on a bus: a dead claimant's task reads open within about
 * this.
 */
const TEAM_EVERY_MS = 1000;

async function teamOnBus(opts: WatchOptions, changed: () => void): Promise<TeamPoll> {
  const { TeamPoll } = await import('./team-poll.js');
  const poll = new TeamPoll(opts.layout, changed, Math.min(TEAM_EVERY_MS, opts.tickMs ?? TEAM_EVERY_MS));
  await poll.poll();
  return poll;
}
