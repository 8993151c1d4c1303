import { join } from 'node:path';
import { TOOLS_DIR } from '../layout/package.js';
import type { Tmux } from './client.js';
import { shellQuote } from './quote.js';

/**
 * What makes a tmux session the fleet's for a person working in it: every window they open
 * (`Ctrl-b c`, a split) finds `flotilla` and `spawn-agent`. The session environment already
 * carries PATH with the tools first, but tmux starts a login shell and a login profile
 * resets PATH, so the session's `default-command` is `tools/fleet-shell`, which starts the
 * person's shell with the tools first (docs/architecture.md, "flotilla up").
 * An agent's identity never stays in the session environment: a session made by a spawn
 * got the child's variables with `new-session -e`, and a window a person opens is not that agent.
 */

/** The shell a window opened in the fleet session runs. */
export const FLEET_SHELL = join(TOOLS_DIR, 'fleet-shell');

const IDENTITY = [
  'FLOTILLA_AGENT_ID',
  'FLOTILLA_DEPTH',
  'FLOTILLA_PARENT_ID',
  'FLOTILLA_SLOT',
  'FLOTILLA_NODE',
  'FLOTILLA_CLI',
  'FLOTILLA_DEMO',
];

/**
 * Sets the fleet session's default-command and clears agent identity from its environment; idempotent, one tmux call.
 */
export async function prepareFleetSession(tmux: Tmux, session: string): Promise<void> {
  await tmux.run(fleetSessionCommands(session).flatMap((c, i) => (i === 0 ? c : [';', ...c])));
}

/** `prepareFleetSession`'s tmux commands, for a spawn making the session to run them in the same call (launch.ts). */
export function fleetSessionCommands(session: string): string[][] {
  const target = `=${session}:`;
  const cmds: string[][] = [['set-option', '-t', target, 'default-command', shellQuote(FLEET_SHELL)]];
  for (const name of IDENTITY) cmds.push(['set-environment', '-t', target, '-u', name]);
  return cmds;
}
