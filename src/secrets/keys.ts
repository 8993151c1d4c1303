import type { Config } from '../config/schema.js';

/**
 * Secret key names and where their values come from (§11). A definition lists the keys an
 * agent may request (`permissions.secrets: [github-token]`); config says, per key, where the
 * approving person's process reads the value and which environment variable the agent's
 * shell commands see it in.
 */

/** Key names as the design card writes them: `github-token`, `npm.publish`, `AWS_KEY`. */
export const SECRET_KEY_PATTERN = /^[a-zA-Z0-9][a-zA-Z0-9_.-]{0,63}$/;
/** The older spelling, environment-variable names (`_TOKEN` included), still loads. */
export const LEGACY_SECRET_KEY_PATTERN = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** Smallest value granted: shorter ones would redact ordinary words out of every output. */
export const MIN_SECRET_CHARS = 8;
/** Largest value accepted through the handoff. */
export const MAX_SECRET_BYTES = 64 * 1024;

export function isSecretKey(key: string): boolean {
  return SECRET_KEY_PATTERN.test(key) || LEGACY_SECRET_KEY_PATTERN.test(key);
}

/** `github-token` → `GITHUB_TOKEN`: upper case, `-` and `.` → `_`. */
export function defaultEnvName(key: string): string {
  return key.toUpperCase().replace(/[-.]/g, '_');
}

export type SecretSource = { env: string } | { command: string };

type SecretsConfig = Pick<Config, 'security'>;

/** Where the approver reads the value: `security.secrets.<key>.env` / `.command`, else the default variable. */
export function secretSource(key: string, config: SecretsConfig): SecretSource {
  const c = config.security.secrets[key];
  if (c?.command) return { command: c.command };
  return { env: c?.env ?? defaultEnvName(key) };
}

/** The variable a granted value is given to shell commands as: `security.secrets.<key>.var`, else the default name. */
export function secretVarName(key: string, config: SecretsConfig): string {
  return config.security.secrets[key]?.var ?? defaultEnvName(key);
}

/**
 * Variables that hold secret values in a harness's own environment (a tmux server started
 * from a shell that exported them): never passed on to commands or children, so a value
 * reaches a command only through a grant.
 */
export function secretSourceVars(keys: readonly string[], config: SecretsConfig): string[] {
  const all = new Set<string>();
  for (const key of [...keys, ...Object.keys(config.security.secrets)]) {
    const src = secretSource(key, config);
    if ('env' in src) all.add(src.env);
    all.add(secretVarName(key, config));
  }
  return [...all];
}
