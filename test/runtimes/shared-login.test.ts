import { existsSync, lstatSync, mkdirSync, readdirSync, readFileSync, readlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { eventually } from '../helpers/tmux.js';
import { completionsFrom } from '../spawn/helpers.js';
import { startFakeGoogle } from './fake-google.js';
import { TARGETS } from './targets.js';
import { DONT_ASK, vendorFleets } from './vendor-suite.js';

/**
 * The person's own login, by reference (docs/runtimes.md, "Logins"): with no key in the
 * environment, an agent's CLI authenticates with the login file in the person's HOME — the
 * fake server sees that login's bearer token. These agents run in Flotilla's sandbox, where
 * the CLI uses the shim's copy of that file, hidden from every other agent and kept in step
 * with it (login-mirror.ts; a refresh: login-refresh.test.ts).
 */
let closing: (() => Promise<void>) | undefined;
const fleets = vendorFleets(async () => {
  await closing?.();
  closing = undefined;
});

/** Every file under `dir` (links not followed), relative. */
function filesUnder(dir: string, prefix = ''): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? filesUnder(join(dir, e.name), `${prefix}${e.name}/`) : [`${prefix}${e.name}`],
  );
}

describe('runtimes.<name>.login: shared (the default)', { timeout: 600_000 }, () => {
  it("Claude Code uses the person's ~/.claude/.credentials.json: the server sees its token; in the sandbox, through the shim's hidden copy", async () => {
    const t = TARGETS.claude();
    const f = await fleets.open({
      ...t,
      env: (url) => ({ ANTHROPIC_BASE_URL: url }),
      script: 'first.yaml',
      definitions: { a: DONT_ASK },
    });
    // The person's login, as `claude` and /login leave it: what this test shares.
    mkdirSync(join(f.home, '.claude'));
    const token = 'sk-ant-oat01-the-persons-own-login-token';
    writeFileSync(
      join(f.home, '.claude', '.credentials.json'),
      JSON.stringify({
        claudeAiOauth: {
          accessToken: token,
          refreshToken: 'sk-ant-ort01-refresh',
          expiresAt: Date.now() + 86_400_000,
          scopes: ['user:inference', 'user:profile'],
          subscriptionType: 'max',
        },
      }),
      { mode: 0o600 },
    );
    const id = await f.spawnChild('a', 'claude-shared', 'first-task-marker-31');
    await eventually(() => completionsFrom(f, 'lead-parent', id).length === 1, 240_000, 'the completion');
    expect(f.vendor.auth.length).toBeGreaterThan(0);
    expect(new Set(f.vendor.auth)).toEqual(new Set([`Bearer ${token}`]));
    // In the sandbox Claude writes its login in a folder of its own: the shim's copy, hidden from every other agent
    // (login-mirror.ts).
    expect(filesUnder(f.layout.root).filter((p) => p.endsWith('.credentials.json'))).toEqual([
      'state/secrets/logins/claude-shared/.credentials.json',
    ]);
    expect(readFileSync(join(f.layout.loginMirror(id), '.credentials.json'), 'utf8')).toBe(
      readFileSync(join(f.home, '.claude', '.credentials.json'), 'utf8'),
    );
  });

  it("Codex uses the person's ~/.codex/auth.json through a link: the server sees its key; in the sandbox the link leads to the shim's hidden copy", async () => {
    const t = TARGETS.codex();
    const f = await fleets.open({
      ...t,
      env: (url) => ({ OPENAI_BASE_URL: `${url}/v1` }),
      script: 'first.yaml',
      definitions: { a: DONT_ASK },
    });
    // The person's login, as `codex login` leaves it: what this test shares.
    mkdirSync(join(f.home, '.codex'));
    const key = 'sk-the-persons-own-codex-login-key';
    const authFile = join(f.home, '.codex', 'auth.json');
    writeFileSync(authFile, JSON.stringify({ OPENAI_API_KEY: key }), { mode: 0o600 });
    const id = await f.spawnChild('a', 'codex-shared', 'first-task-marker-31', t.spawnArgs);
    await eventually(() => completionsFrom(f, 'lead-parent', id).length === 1, 240_000, 'the completion');
    expect(new Set(f.vendor.auth)).toEqual(new Set([`Bearer ${key}`]));
    // In the sandbox the link leads to the shim's copy of the person's file, kept in step with it (login-mirror.ts).
    const link = join(f.layout.runtimeDir(id), 'auth.json');
    expect(lstatSync(link).isSymbolicLink()).toBe(true);
    expect(readlinkSync(link)).toBe(join(f.layout.loginMirror(id), 'auth.json'));
    expect(readFileSync(link, 'utf8')).toBe(readFileSync(authFile, 'utf8'));
  });

  it("Gemini CLI uses the person's ~/.gemini/oauth_creds.json through a link and their selected auth type: Google's side sees its token", async () => {
    const t = TARGETS.gemini();
    // No key and no base URL: the person's Google login (docs/runtimes.md, "Logins").
    const f = await fleets.open({
      ...t,
      env: () => ({}),
      script: 'first.yaml',
      definitions: { a: DONT_ASK },
    });
    const google = await startFakeGoogle(f.vendor, f.home);
    closing = google.close;
    // The person reaches Google through a proxy that inspects TLS, with its authority trusted
    // (the spawner's environment: the tmux server the spawn starts has it too).
    Object.assign(f.env, {
      HTTPS_PROXY: google.proxyUrl,
      NODE_EXTRA_CA_CERTS: google.caFile,
      NO_PROXY: '127.0.0.1,localhost',
    });
    // The person's login, as Gemini's sign-in leaves it: what this test shares.
    mkdirSync(join(f.home, '.gemini'));
    const token = 'ya29.the-persons-own-google-login-token';
    const credsFile = join(f.home, '.gemini', 'oauth_creds.json');
    writeFileSync(
      credsFile,
      JSON.stringify({
        access_token: token,
        refresh_token: '1//the-persons-refresh-token',
        token_type: 'Bearer',
        expiry_date: Date.now() + 3_600_000,
        scope: 'https://www.googleapis.com/auth/cloud-platform https://www.googleapis.com/auth/userinfo.email openid',
      }),
      { mode: 0o600 },
    );
    writeFileSync(
      join(f.home, '.gemini', 'settings.json'),
      JSON.stringify({ security: { auth: { selectedType: 'oauth-personal' } } }),
    );
    const id = await f.spawnChild('a', 'gemini-shared', 'first-task-marker-31', t.spawnArgs);
    await eventually(() => completionsFrom(f, 'lead-parent', id).length === 1, 240_000, 'the completion');
    expect(completionsFrom(f, 'lead-parent', id)[0]!.body).toContain('the first request arrived');
    // The model calls carried the person's token, through Code Assist, as Gemini does for a Google login.
    expect(f.vendor.auth.length).toBeGreaterThan(0);
    expect(new Set(f.vendor.auth)).toEqual(new Set([`Bearer ${token}`]));
    // Gemini checked the login with Google before use and spoke Code Assist with it: every request to Google's side
    // carried it.
    expect(google.requests.map((r) => r.url)).toEqual(
      expect.arrayContaining([
        'oauth2.googleapis.com/tokeninfo',
        'cloudcode-pa.googleapis.com/v1internal:loadCodeAssist',
      ]),
    );
    expect(new Set(google.requests.map((r) => r.auth))).toEqual(new Set([`Bearer ${token}`]));
    const link = join(f.layout.runtimeDir(id), '.gemini', 'oauth_creds.json');
    expect(lstatSync(link).isSymbolicLink()).toBe(true);
    expect(readlinkSync(link)).toBe(join(f.layout.loginMirror(id), 'oauth_creds.json'));
    expect(readFileSync(link, 'utf8')).toBe(readFileSync(credsFile, 'utf8'));
    expect(
      filesUnder(f.layout.root)
        .filter((p) => p.endsWith('oauth_creds.json'))
        .sort(),
    ).toEqual([
      'state/runtimes/gemini-shared/.gemini/oauth_creds.json',
      'state/secrets/logins/gemini-shared/oauth_creds.json',
    ]);
  });
});
