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
 * - Bus credentials (busCredentialVars) are the harness's alone, whatever the definition
 *   lists: with them a command could write any mail, record or slot of the fleet on the bus.
 *   Its fleet commands go through its harness's door instead (inbox/door.ts `DOOR_BUS_ENV`).
 */
export const TMUX_VARS: readonly string[] = ['TMUX', 'TMUX_PANE'];

/** The variables holding model provider keys: the built-in providers' and every configured `api_key_env`. */
export function providerKeyVars(config: Pick<Config, 'models'>): string[] {
  const configured = Object.values(config.models.providers)
    .map((p) => p.api_key_env)
    .filter((k): k is string => !!k);
  return [...new Set(['ANTHROPIC_API_KEY', 'OPENAI_API_KEY', 'GEMINI_API_KEY', 'GOOGLE_API_KEY', ...configured])];
}

/** The variables holding the fleet bus's credentials (`fleet.nats`: token, user, password). */
export function busCredentialVars(config: Pick<Config, 'fleet'>): string[] {
  const { token_env, user_env, password_env } = config.fleet.nats;
  return [...new Set([token_env, user_env, password_env])];
}

/** The bus credentials `env` holds, by variable. */
export function busCredentials(config: Pick<Config, 'fleet'>, env: NodeJS.ProcessEnv): Record<string, string> {
  const out: Record<string, string> = {};
  for (const name of busCredentialVars(config)) if (env[name]) out[name] = env[name];
  return out;
}

/** Whether `env` holds any bus credential: its holder's fleet commands then go through its door. */
export function holdsBusCredentials(config: Pick<Config, 'fleet'>, env: NodeJS.ProcessEnv): boolean {
  return busCredentialVars(config).some((name) => !!env[name]);
}

/** `keys` go unless `allow` lists them; `never` go whatever `allow` says. */
export function commandEnvironment(
  env: NodeJS.ProcessEnv,
  opts: { keys?: readonly string[]; allow?: readonly string[]; never?: readonly string[] } = {},
): NodeJS.ProcessEnv {
  const out = { ...env };
  const allow = new Set(opts.allow ?? []);
  for (const name of [...TMUX_VARS, ...(opts.keys ?? [])]) if (!allow.has(name)) delete out[name];
  for (const name of opts.never ?? []) delete out[name];
  return out;
}
