/**
 * The environment of a tool command (docs/security.md, "What a command can do"): the
 * harness's own, less what would hand the command the fleet's controls. `TMUX` and
 * `TMUX_PANE` name the server and pane the harness runs in; a command that has them talks to
 * that server without searching (types into panes, approves, `run-shell`). Children that a
 * command spawns open beside their parent anyway (spawn/launch.ts reads the parent's record).
 */
export const TMUX_VARS: readonly string[] = ['TMUX', 'TMUX_PANE'];

export function commandEnvironment(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  const out = { ...env };
  for (const name of TMUX_VARS) delete out[name];
  return out;
}
