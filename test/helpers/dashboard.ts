import { CLI } from './cli.js';
import type { TmuxServer } from './tmux.js';

/**
 * Starts the person's dashboard (`flotilla watch --tick 0.5`, unless `args` says otherwise) as
 * session `session` of `tmux`, `width`×`height`, in `cwd`, with `env` as its environment.
 */
export async function openDashboard(
  tmux: TmuxServer,
  opts: { session: string; width: number; height: number; cwd: string; env: Record<string, string>; args?: string[] },
): Promise<void> {
  const envArgs = Object.entries(opts.env).flatMap(([k, v]) => ['-e', `${k}=${v}`]);
  await tmux.tmux(
    'new-session',
    '-d',
    '-s',
    opts.session,
    '-x',
    String(opts.width),
    '-y',
    String(opts.height),
    '-c',
    opts.cwd,
    ...envArgs,
    process.execPath,
    CLI,
    'watch',
    ...(opts.args ?? ['--tick', '0.5']),
  );
}
