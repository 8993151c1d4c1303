// The public edge of the tmux wrapper (§5.4).
export {
  Tmux,
  tmuxSocket,
  socketArgs,
  parsePaneInfo,
  type PaneRef,
  type PaneInfo,
  type NewSessionOptions,
  type NewWindowOptions,
} from './client.js';
export { currentTmux, parseTmuxEnv, type CurrentTmux, type TmuxEnv } from './current.js';
export { runShellCommand, shellCommand, shellQuote, tmuxFormat, tmuxQuote, type TmuxFormat } from './quote.js';
export { fleetSessionName } from './session-name.js';
export { prepareFleetSession, FLEET_SHELL } from './fleet-session.js';
export { parseTmuxVersion, tmuxNewEnough, tmuxVersionRefusal, type TmuxVersion } from './version.js';
