import { cliConfig, contextOf, noFleetLine, type Globals } from '../context.js';
import type { CommandSpec, Parsed } from '../spec.js';

/**
 * `flotilla watch` (§2): the live dashboard, loaded inside `run` only. On the fast path (fast.ts): its first frame has
 * a 250 ms budget.
 */
export const spec: CommandSpec = {
  name: 'watch',
  fast: true,
  description: 'live dashboard of the agent tree, redrawn on change; keys to attach, message, cancel, approve/deny',
  args: [],
  options: [{ flags: '--tick <secs>', description: 'refresh elapsed times this often', default: '5', hidden: true }],
};

export async function run(parsed: Parsed, globals: Globals): Promise<void> {
  const { layout } = contextOf(globals, { createState: false });
  const none = noFleetLine(layout);
  if (none) {
    const { FlotillaError } = await import('../../errors.js');
    throw new FlotillaError(none, { code: 'no-fleet' });
  }
  // The dashboard's modules load while the config is read.
  const modules = Promise.all([import('../../watch/index.js'), import('../../tmux/client.js')]);
  modules.catch(() => undefined);
  const { config } = await cliConfig(layout);
  const [{ runWatch }, { tmuxSocket }] = await modules;
  const tick = Number(parsed.opts.tick);
  process.exitCode = await runWatch({
    layout,
    config,
    socket: tmuxSocket(config.tmux.socket),
    title: `flotilla · ${layout.project}`,
    statsFile: process.env.FLOTILLA_WATCH_STATS || undefined,
    tickMs: Number.isFinite(tick) && tick > 0 ? tick * 1000 : undefined,
  });
}
