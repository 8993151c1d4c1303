import { isAbsolute, join, resolve } from 'node:path';
import type { VendorRuntimeName } from '../runtimes/types.js';

/**
 * The person's credentials, out of reach in both sandboxes (docs/security.md, "Credentials
 * hidden"): the one Flotilla puts around an agent's shell commands and the one a
 * vendor CLI runs in. Every path here is hidden — a folder behind an empty tmpfs, a file
 * behind /dev/null — except the vendor CLI's own login, which that CLI needs to reach its
 * model and which it alone sees. Pure: which of these exist, and where their links lead, is
 * the sandbox's to find out (tools/sandbox.ts).
 */

/** Under the home: keys, cloud and cluster logins, registry and forge tokens. */
export const HOME_CREDENTIALS = [
  '.ssh',
  '.gnupg',
  '.aws',
  '.azure',
  '.config/gcloud',
  '.kube',
  '.docker/config.json',
  '.netrc',
  '.git-credentials',
  '.config/gh',
  '.npmrc',
  '.pypirc',
  '.cargo/credentials.toml',
  '.config/hub',
] as const;

/**
 * Each coding CLI's login under the home. Flotilla's three runtimes first: an agent of one
 * sees its own (when its CLI runs sandboxed) and never another's; the rest are never seen.
 */
export const CLI_LOGINS: Record<VendorRuntimeName | 'other', readonly string[]> = {
  claude: ['.claude', '.claude.json'],
  codex: ['.codex'],
  gemini: ['.gemini'],
  other: ['.config/github-copilot', '.local/share/opencode', '.cursor', '.aider.conf.yml', '.qwen'],
};

export interface CredentialPaths {
  /** Paths to hide (absolute, not yet resolved through links, possibly missing). */
  hidden: string[];
  /** The vendor CLI's own login where it lies inside a hidden path: bound back read-only. */
  own: string[];
}

/**
 * What to hide for an agent whose CLI is `runtime` (none: Flotilla's own harness, which
 * needs no vendor login). Variables that move a credential (`GNUPGHOME`, `CLAUDE_CONFIG_DIR`,
 * `KUBECONFIG`, …) are followed; `extra` is `security.hidden_paths`, which only the person's
 * own config sets (`~/` is the home; a relative path is taken from the home).
 */
export function credentialPaths(opts: {
  home: string;
  env: NodeJS.ProcessEnv;
  extra?: readonly string[];
  runtime?: VendorRuntimeName;
}): CredentialPaths {
  const { home, env } = opts;
  const at = (p: string) => join(home, p);
  const xdg = env.XDG_CONFIG_HOME?.trim();
  const set = (name: string) => env[name]?.trim() || undefined;
  const moved = [
    set('GNUPGHOME'),
    set('CLOUDSDK_CONFIG'),
    set('GH_CONFIG_DIR'),
    set('AWS_SHARED_CREDENTIALS_FILE'),
    set('AWS_CONFIG_FILE'),
    set('AZURE_CONFIG_DIR'),
    set('NPM_CONFIG_USERCONFIG'),
    set('DOCKER_CONFIG') && join(set('DOCKER_CONFIG')!, 'config.json'),
    set('NETRC'),
    ...(set('KUBECONFIG')?.split(':') ?? []),
    xdg && join(xdg, 'gcloud'),
    xdg && join(xdg, 'gh'),
  ].filter((p): p is string => Boolean(p) && isAbsolute(p as string));
  const logins: Record<VendorRuntimeName, string[]> = {
    claude: [set('CLAUDE_CONFIG_DIR') ?? at('.claude'), at('.claude.json')],
    codex: [set('CODEX_HOME') ?? at('.codex')],
    gemini: [at('.gemini'), ...(set('GEMINI_CLI_HOME') ? [join(set('GEMINI_CLI_HOME')!, '.gemini')] : [])],
  };
  const own = opts.runtime ? logins[opts.runtime] : [];
  // Gemini's Vertex login is a service-account file, often under ~/.config/gcloud.
  if (opts.runtime === 'gemini' && set('GOOGLE_APPLICATION_CREDENTIALS'))
    own.push(resolve(home, set('GOOGLE_APPLICATION_CREDENTIALS')!));
  const others = (Object.keys(logins) as VendorRuntimeName[])
    .filter((r) => r !== opts.runtime)
    .flatMap((r) => [...logins[r], ...CLI_LOGINS[r].map(at)]);
  const extra = (opts.extra ?? []).map((p) =>
    p === '~' ? home : p.startsWith('~/') ? join(home, p.slice(2)) : resolve(home, p),
  );
  const hidden = [
    ...new Set([...HOME_CREDENTIALS.map(at), ...moved, ...others, ...CLI_LOGINS.other.map(at), ...extra]),
  ].filter((p) => !own.includes(p));
  return { hidden, own: own.filter((p) => hidden.some((h) => p.startsWith(h + '/'))) };
}
