import { existsSync, readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import type { VendorRuntimeName } from './types.js';

/**
 * How a vendor CLI authenticates, decided before it starts (docs/runtimes.md, "Logins"):
 * a key in the spawner's environment, or — with `runtimes.<name>.login: shared` — the
 * person's own login, used by reference where the CLI keeps it (in Flotilla's sandbox through a
 * copy the shim keeps in step with it: harness/cli-host/login-mirror.ts).
 */
export type LoginMode = 'shared' | 'isolated';

export interface LoginPlan {
  /** What will authenticate the CLI, for the log and `doctor`. */
  via: string;
  /** The person's login file the agent uses by reference (shared login only). */
  file?: string;
}

/** Any one of these in the spawner's environment authenticates the CLI. */
const KEY_VARS: Record<VendorRuntimeName, readonly string[]> = {
  claude: [
    'ANTHROPIC_API_KEY',
    'ANTHROPIC_AUTH_TOKEN',
    'CLAUDE_CODE_OAUTH_TOKEN',
    'CLAUDE_CODE_USE_BEDROCK',
    'CLAUDE_CODE_USE_VERTEX',
  ],
  codex: ['OPENAI_API_KEY', 'CODEX_API_KEY'],
  gemini: ['GEMINI_API_KEY', 'GOOGLE_API_KEY', 'GOOGLE_GENAI_USE_VERTEXAI', 'GOOGLE_APPLICATION_CREDENTIALS'],
};

/**
 * The variables that authenticate `runtime`'s CLI: the only provider keys its process is given (docs/security-fleet.md
 * "Vendor runtimes").
 */
export function runtimeKeyVars(runtime: VendorRuntimeName): readonly string[] {
  return KEY_VARS[runtime];
}

/** The person's home as the CLIs see it. */
function home(env: NodeJS.ProcessEnv): string {
  return env.HOME?.trim() || homedir();
}

/** Claude's folder for the person's login: theirs from CLAUDE_CONFIG_DIR, else ~/.claude. */
export function claudeLoginDir(env: NodeJS.ProcessEnv): string {
  return env.CLAUDE_CONFIG_DIR?.trim() || join(home(env), '.claude');
}

/** The person's login file for `runtime`, where the CLI keeps it (docs/runtimes.md, "Logins"). */
export function loginFile(runtime: VendorRuntimeName, env: NodeJS.ProcessEnv): string {
  switch (runtime) {
    case 'claude':
      return join(claudeLoginDir(env), '.credentials.json');
    case 'codex':
      return join(env.CODEX_HOME?.trim() || join(home(env), '.codex'), 'auth.json');
    case 'gemini':
      return join(home(env), '.gemini', 'oauth_creds.json');
  }
}

/** The Gemini auth type the person selected (`security.auth.selectedType` in ~/.gemini/settings.json). */
export function geminiSelectedAuth(env: NodeJS.ProcessEnv): string | undefined {
  try {
    const s = JSON.parse(readFileSync(join(home(env), '.gemini', 'settings.json'), 'utf8')) as {
      security?: { auth?: { selectedType?: unknown } };
    };
    const t = s.security?.auth?.selectedType;
    return typeof t === 'string' ? t : undefined;
  } catch {
    return undefined;
  }
}

/**
 * What will authenticate the CLI, or the one line that says how to fix it. A key in the
 * environment wins; a shared login needs the person's login file. (macOS keeps Claude's login
 * in the keychain: there the `claude` login is taken on trust when ~/.claude.json names an account.)
 */
export function planLogin(
  runtime: VendorRuntimeName,
  env: NodeJS.ProcessEnv,
  mode: LoginMode,
): LoginPlan | { fix: string } {
  const key = KEY_VARS[runtime].find((k) => env[k]?.trim());
  if (key) return { via: `$${key}` };
  if (mode === 'shared') {
    const file = loginFile(runtime, env);
    if (existsSync(file)) return { via: `the person's login (${file})`, file };
    if (runtime === 'claude' && process.platform === 'darwin' && claudeAccountNamed(env))
      return { via: "the person's login (keychain)", file };
  }
  return { fix: FIX[runtime](mode) };
}

function claudeAccountNamed(env: NodeJS.ProcessEnv): boolean {
  try {
    const dir = env.CLAUDE_CONFIG_DIR?.trim();
    const file = dir ? join(dir, '.claude.json') : join(home(env), '.claude.json');
    return Boolean((JSON.parse(readFileSync(file, 'utf8')) as { oauthAccount?: unknown }).oauthAccount);
  } catch {
    return false;
  }
}

const isolatedNote = (name: string, mode: LoginMode): string =>
  mode === 'isolated' ? ` (runtimes.${name}.login is isolated: set the key, or set it to shared)` : '';

const FIX: Record<VendorRuntimeName, (mode: LoginMode) => string> = {
  claude: (m) =>
    m === 'shared'
      ? 'Claude Code has no login here — run `claude` once in a terminal and /login, or set ANTHROPIC_API_KEY'
      : `Claude Code has no key here — set ANTHROPIC_API_KEY or CLAUDE_CODE_OAUTH_TOKEN${isolatedNote('claude', m)}`,
  codex: (m) =>
    m === 'shared'
      ? 'Codex has no login here — run `codex login` once in a terminal, or set OPENAI_API_KEY'
      : `Codex has no key here — set OPENAI_API_KEY${isolatedNote('codex', m)}`,
  gemini: (m) =>
    m === 'shared'
      ? 'Gemini CLI has no login here — run `gemini` once in a terminal and sign in with Google, or set GEMINI_API_KEY'
      : `Gemini CLI has no key here — set GEMINI_API_KEY${isolatedNote('gemini', m)}`,
};
