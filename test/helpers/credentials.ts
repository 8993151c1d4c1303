import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';

/**
 * A person's credentials in a test home, each file holding `SECRET-<name>`, and a probe
 * script that an agent's shell (or a vendor CLI's shell tool) runs to say which it could
 * read (docs/security.md, "Credentials hidden"). `~/.ssh` is a link to a dotfiles
 * folder, as a dotfiles manager makes it; `~/private` is what `security.hidden_paths` adds;
 * `~/notes.txt` is an ordinary file, which stays readable.
 */
export const CREDENTIALS: Record<string, string> = {
  ssh: '.ssh/id_test',
  gnupg: '.gnupg/private-keys-v1.d/key.key',
  aws: '.aws/credentials',
  azure: '.azure/msal_token_cache.json',
  gcloud: '.config/gcloud/credentials.db',
  kube: '.kube/config',
  docker: '.docker/config.json',
  netrc: '.netrc',
  'git-credentials': '.git-credentials',
  gh: '.config/gh/hosts.yml',
  npmrc: '.npmrc',
  claude: '.claude/.credentials.json',
  'claude-json': '.claude.json',
  codex: '.codex/auth.json',
  gemini: '.gemini/oauth_creds.json',
  private: 'private/notes.txt',
  notes: 'notes.txt',
};

/** The person's config line that hides `~/private` (only their own config may set it). */
export const HIDDEN_PATHS_CONFIG = 'security:\n  hidden_paths: ["~/private"]\n';

/**
 * Seeds the credentials into `home` (the test's point: what an agent must not read) and
 * writes `probe.sh` into `project`; `sh probe.sh` writes `<name>:read|hidden` lines to
 * probe.txt there.
 */
export function seedCredentials(home: string, project: string): void {
  const dotfiles = join(home, 'dotfiles', 'ssh');
  mkdirSync(dotfiles, { recursive: true });
  symlinkSync(dotfiles, join(home, '.ssh'));
  for (const [name, rel] of Object.entries(CREDENTIALS)) {
    mkdirSync(dirname(join(home, rel)), { recursive: true });
    writeFileSync(join(home, rel), `SECRET-${name}\n`, { mode: 0o600 });
  }
  const lines = Object.entries(CREDENTIALS).map(([name, rel]) => {
    // The folder where the credential lives in one, so a listing or a search finds nothing either.
    const top = join(
      home,
      rel
        .split('/')
        .slice(0, rel.startsWith('.config/') ? 2 : 1)
        .join('/'),
    );
    return `if grep -rqs SECRET- '${top}'; then echo '${name}:read'; else echo '${name}:hidden'; fi`;
  });
  writeFileSync(join(project, 'probe.sh'), `{\n${lines.join('\n')}\n} > probe.txt\necho probed\n`);
}

/** What probe.txt says: name → read | hidden. */
export function probeResults(text: string): Record<string, string> {
  return Object.fromEntries(
    text
      .trim()
      .split('\n')
      .map((l) => l.split(':') as [string, string]),
  );
}

/** What an agent may read: `notes`, and the login of its own CLI (none for Flotilla's harness). */
export function expectedProbe(own: readonly string[] = []): Record<string, string> {
  return Object.fromEntries(
    Object.keys(CREDENTIALS).map((n) => [n, n === 'notes' || own.includes(n) ? 'read' : 'hidden']),
  );
}

/**
 * Writes `probe-print.sh` into `project`: it prints whatever it can read of each credential
 * (the file, and a search of the folder it lives in), then `probe-ran`, then tries to write
 * `probe-wrote.txt` in the project and says `probe-wrote` or `probe-write-refused`. Seed the
 * home with `seedCredentials` first. A secret it could read is in its output as `SECRET-<name>`.
 */
export function printingProbe(home: string, project: string): void {
  const lines = Object.values(CREDENTIALS).map((rel) => {
    const top = join(
      home,
      rel
        .split('/')
        .slice(0, rel.startsWith('.config/') ? 2 : 1)
        .join('/'),
    );
    return `cat '${join(home, rel)}' 2>&1 | head -c 300; grep -rs SECRET- '${top}' | head -c 300`;
  });
  writeFileSync(
    join(project, 'probe-print.sh'),
    `${lines.join('\n')}\necho probe-ran\nif echo x > probe-wrote.txt; then echo probe-wrote; else echo probe-write-refused; fi\n`,
  );
}

/** The names of the `SECRET-<name>` values in `text` (`claude` is not found in `SECRET-claude-json`). */
export function secretsIn(text: string): string[] {
  return Object.keys(CREDENTIALS).filter((name) => new RegExp(`SECRET-${name}(?![a-z-])`).test(text));
}
