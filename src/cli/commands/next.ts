import { cliConfig, contextOf, noFleetLine, type Globals } from '../context.js';
import { writeOut } from '../output.js';
import type { CommandSpec, Parsed } from '../spec.js';

/**
 * `flotilla next` (§2): switch the tmux client to the next agent that needs a person — the dashboard's `n` from any
 * terminal.
 */
export const spec: CommandSpec = {
  name: 'next',
  description:
    'switch the tmux client to the next agent that needs you (an approval, mail for you, a failure, a place in line)',
  args: [],
  options: [],
};

export async function run(_parsed: Parsed, globals: Globals): Promise<void> {
  const { layout } = contextOf(globals, { createState: false });
  // A look never makes a fleet root: with none here, nothing can need you.
  const none = noFleetLine(layout);
  if (none) {
    writeOut(`nothing needs you — ${none}\n`);
    return;
  }
  const { config } = await cliConfig(layout);
  const [{ goNext }, { tmuxSocket }, { fleetSessionName }] = await Promise.all([
    import('../../watch/next.js'),
    import('../../tmux/client.js'),
    import('../../tmux/session-name.js'),
  ]);
  const r = await goNext({
    layout,
    socket: tmuxSocket(config.tmux.socket),
    session: fleetSessionName(config.tmux.session_prefix, layout.project),
  });
  if (r.code === 0) writeOut(r.line + '\n');
  else process.stderr.write(`flotilla: ${r.line}\n`);
  process.exitCode = r.code;
}
