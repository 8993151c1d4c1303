import type { Config } from '../config/schema.js';

/**
 * The environment of a tool command (docs/security.md, "What a command can do"): the
 * harness's own, less what would hand the command the fleet's controls or its keys.
 * - `TMUX` and `TMUX_PANE` name the server and pane the harness runs in; a command that has
 *   them talks to that server without searching (types into panes, approves, `run-shell`).
 *   Children that a command spawns open beside their parent anyway (spawn/launch.ts reads
 *   the parent's record).
 * - Provider keys (the model's own, every `api_key_env`) are the harness's, for its model;
 *   a command gets one only when the definition lists it in `permissions.env`.
 */
export const TMUX_VARS: readonly string[] = ['TMUX', 'TMUX_PANE'];

/** The variables holding model provider keys: the built-in providers' and every configured `api_key_env`. */
export function providerKeyVars(config: Pick<Config, 'models'>): string[] {
  const configured = Object.values(config.models.providers).map((p) => p.api_key_env).filter((k): k is string => !!k);
  return [...new Set(['ANTHROPIC_API_KEY', 'OPENAI_API_KEY', 'GEMINI_API_KEY', 'GOOGLE_API_KEY', ...configured])];
}

export function commandEnvironment(env: NodeJS.ProcessEnv, opts: { keys?: readonly string[]; allow?: readonly string[] } = {}): NodeJS.ProcessEnv {
  const out = { ...env };
  const allow = new Set(opts.allow ?? []);
  for (const name of [...TMUX_VARS, ...(opts.keys ?? [])]) if (!allow.has(name)) delete out[name];
  return out;
}
