import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { configSchema } from '../../src/config/schema.js';
import { stripUntrusted } from '../../src/config/trust-filter.js';
import { credentialPaths, HOME_CREDENTIALS } from '../../src/tools/sandbox-credentials.js';

/**
 * Which of the person's paths each sandbox hides (docs/security.md, "Credentials
 * hidden"); the end-to-end reads are test/spawn/sandbox-credentials.test.ts and
 * test/runtimes/sandbox-credentials.test.ts.
 */
const HOME = '/home/p';
const at = (p: string) => join(HOME, p);
const ALWAYS = [
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
].map(at);

describe('credentialPaths', () => {
  it("hides every credential and every CLI's login from Flotilla's own shell", () => {
    const { hidden, own } = credentialPaths({ home: HOME, env: {} });
    expect(hidden).toEqual(
      expect.arrayContaining([
        ...ALWAYS,
        at('.claude'),
        at('.claude.json'),
        at('.codex'),
        at('.gemini'),
        at('.local/share/opencode'),
      ]),
    );
    expect(HOME_CREDENTIALS.map(at)).toEqual(expect.arrayContaining(ALWAYS));
    expect(own).toEqual([]);
  });

  it.each([
    ['claude', [at('.claude'), at('.claude.json')], [at('.codex'), at('.gemini')]],
    ['codex', [at('.codex')], [at('.claude'), at('.claude.json'), at('.gemini')]],
    ['gemini', [at('.gemini')], [at('.claude'), at('.claude.json'), at('.codex')]],
  ] as const)('a %s CLI keeps its own login and sees no other', (runtime, mine, others) => {
    const { hidden } = credentialPaths({ home: HOME, env: {}, runtime });
    expect(hidden).toEqual(expect.arrayContaining([...ALWAYS, ...others]));
    for (const p of mine) expect(hidden).not.toContain(p);
  });

  it('follows the variables that move a credential or a login', () => {
    const env = {
      GNUPGHOME: '/keys/gpg',
      KUBECONFIG: '/k/a:/k/b',
      DOCKER_CONFIG: '/d',
      XDG_CONFIG_HOME: '/cfg',
      CLAUDE_CONFIG_DIR: '/c/claude',
      CODEX_HOME: '/c/codex',
      AWS_SHARED_CREDENTIALS_FILE: 'relative/ignored',
    };
    const codex = credentialPaths({ home: HOME, env, runtime: 'codex' });
    expect(codex.hidden).toEqual(
      expect.arrayContaining(['/keys/gpg', '/k/a', '/k/b', '/d/config.json', '/cfg/gcloud', '/cfg/gh', '/c/claude']),
    );
    expect(codex.hidden).not.toContain('/c/codex');
    expect(codex.hidden).not.toContain('relative/ignored');
    expect(credentialPaths({ home: HOME, env, runtime: 'claude' }).hidden).toContain('/c/codex');
  });

  it("binds back Gemini's service-account file where it lies in a hidden folder", () => {
    const file = at('.config/gcloud/application_default_credentials.json');
    const { hidden, own } = credentialPaths({
      home: HOME,
      env: { GOOGLE_APPLICATION_CREDENTIALS: file },
      runtime: 'gemini',
    });
    expect(hidden).toContain(at('.config/gcloud'));
    expect(own).toEqual([file]);
    expect(
      credentialPaths({ home: HOME, env: { GOOGLE_APPLICATION_CREDENTIALS: file }, runtime: 'codex' }).own,
    ).toEqual([]);
  });

  it("adds the person's security.hidden_paths, ~/ being the home", () => {
    const { hidden } = credentialPaths({ home: HOME, env: {}, extra: ['~/private', '/srv/keys', 'notes/secret.txt'] });
    expect(hidden).toEqual(expect.arrayContaining([at('private'), '/srv/keys', at('notes/secret.txt')]));
  });

  it("security.hidden_paths is the person's alone: an untrusted project cannot set it", () => {
    const values: Record<string, unknown> = { security: { hidden_paths: ['~/nothing'] } };
    expect(stripUntrusted(values, configSchema.parse({}), ['security.hidden_paths'])).toContain(
      'security.hidden_paths',
    );
    expect(values).toEqual({});
  });
});
