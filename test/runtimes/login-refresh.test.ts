import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { eventually } from '../helpers/tmux.js';
import { completionsFrom } from '../spawn/helpers.js';
import { fakeTokenService, unsignedJwt } from './fake-token-service.js';
import { sendJson, startTlsStandIn } from './tls-stand-in.js';
import { startFakeGoogle } from './fake-google.js';
import { TARGETS } from './targets.js';
import { DONT_ASK, vendorFleets } from './vendor-suite.js';

/**
 * A shared login refreshed during a run (docs/runtimes.md, "Logins"; docs/decisions.md, "A
 * refreshed login is written back by the shim"): the person's access token has expired — the
 * fake API refuses it with 401 — so the CLI refreshes it at the vendor's token service (stood
 * in for over TLS, tls-stand-in.ts); the person's own login file then holds the new tokens,
 * and the next agent's requests carry the new access token without another refresh. With
 * `sandbox: auto` the CLI runs in Flotilla's sandbox (the shim writes the refresh back), with
 * `none` unwrapped (the CLI writes through the link or into the person's folder).
 */
let standIn: { close(): Promise<void> } | undefined;
const fleets = vendorFleets(async () => {
  await standIn?.close();
  standIn = undefined;
});

describe('a shared login refreshed during a run', { timeout: 600_000 }, () => {
  it.each([
    ['dont_ask', 'auto'],
    ['dont_ask', 'none'],
  ] as const)(
    "Gemini CLI (%s, sandbox %s): the refreshed Google token lands in the person's ~/.gemini/oauth_creds.json and the next agent uses it",
    async (mode, sandbox) => {
      const t = TARGETS.gemini();
      const first = { access: 'ya29.the-persons-expired-token', refresh: '1//the-persons-refresh-token' };
      // Google keeps the refresh token: its answer to a refresh carries a new access token only.
      const s = fakeTokenService(
        first,
        (n) => ({
          access_token: n.access,
          expires_in: 3599,
          token_type: 'Bearer',
          scope: 'https://www.googleapis.com/auth/cloud-platform',
        }),
        (n) => ({ access: `ya29.refreshed-token-${n}`, refresh: first.refresh }),
      );
      // No key and no base URL: the person's Google login (docs/runtimes.md, "Logins").
      const f = await fleets.open({
        ...t,
        env: () => ({}),
        script: 'first.yaml',
        definitions: { a: `permissions:\n  permission_mode: ${mode}\n` },
        // Sandbox off in 'none' only, unlike a user's default: the CLI then writes the login file itself.
        ...(sandbox === 'none' ? { config: 'security:\n  sandbox: none\n' } : {}),
      });
      const google = await startFakeGoogle(f.vendor, f.home, { tokens: s });
      standIn = google;
      Object.assign(f.env, {
        HTTPS_PROXY: google.proxyUrl,
        NODE_EXTRA_CA_CERTS: google.caFile,
        NO_PROXY: '127.0.0.1,localhost',
      });
      // The person's access token has expired: Google's API takes only the one its token service issued last.
      f.vendor.accepts = (credential) =>
        credential !== `Bearer ${first.access}` && credential === `Bearer ${s.current}`;
      // Pre-seeded: the Google login Gemini's sign-in leaves (token expired); a test cannot run that sign-in.
      mkdirSync(join(f.home, '.gemini'));
      const credsFile = join(f.home, '.gemini', 'oauth_creds.json');
      writeFileSync(
        credsFile,
        JSON.stringify({
          access_token: first.access,
          refresh_token: first.refresh,
          token_type: 'Bearer',
          expiry_date: Date.now() - 60_000,
          scope: 'https://www.googleapis.com/auth/cloud-platform https://www.googleapis.com/auth/userinfo.email openid',
        }),
        { mode: 0o600 },
      );
      writeFileSync(
        join(f.home, '.gemini', 'settings.json'),
        JSON.stringify({ security: { auth: { selectedType: 'oauth-personal' } } }),
      );
      const person = () =>
        JSON.parse(readFileSync(credsFile, 'utf8')) as { access_token: string; refresh_token?: string };

      const a = await f.spawnChild('a', 'gemini-refresh-a', 'first-task-marker-31', t.spawnArgs);
      await eventually(
        () => completionsFrom(f, 'lead-parent', a).length === 1,
        240_000,
        "the first agent's completion",
      );
      expect(completionsFrom(f, 'lead-parent', a)[0]!.body).toContain('the first request arrived');
      expect(s.refreshes).toEqual([first.refresh]);
      expect(f.vendor.auth.length).toBeGreaterThan(0);
      expect(new Set(f.vendor.auth)).toEqual(new Set([`Bearer ${s.current}`]));
      // In the person's own file, not only in the agent's copy.
      await eventually(
        () => person().access_token === s.current,
        30_000,
        "the refreshed token in the person's oauth_creds.json",
      );

      const seen = f.vendor.auth.length;
      const b = await f.spawnChild('a', 'gemini-refresh-b', 'first-task-marker-31', t.spawnArgs);
      await eventually(
        () => completionsFrom(f, 'lead-parent', b).length === 1,
        240_000,
        "the second agent's completion",
      );
      expect(f.vendor.auth.length).toBeGreaterThan(seen);
      expect(new Set(f.vendor.auth.slice(seen))).toEqual(new Set([`Bearer ${s.current}`]));
      expect(s.refreshes).toEqual([first.refresh]);
      // In the sandbox the CLI's copy of the login lies where no other agent looks, and only while it runs.
      expect(existsSync(join(f.layout.loginMirror(a), 'oauth_creds.json'))).toBe(sandbox === 'auto');
    },
  );
});

describe('a shared Claude login refreshed during a run', { timeout: 600_000 }, () => {
  it.each(['auto', 'none'] as const)(
    "Claude Code (dont_ask, sandbox %s): the refreshed OAuth tokens land in the person's ~/.claude/.credentials.json and the next agent uses them",
    async (sandbox) => {
      const t = TARGETS.claude();
      const first = { access: 'sk-ant-oat01-the-persons-expired-token', refresh: 'sk-ant-ort01-the-persons-refresh-1' };
      const s = fakeTokenService(
        first,
        (n) => ({
          access_token: n.access,
          refresh_token: n.refresh,
          expires_in: 28_800,
          token_type: 'Bearer',
          scope: 'user:inference user:profile',
        }),
        (n) => ({ access: `sk-ant-oat01-refreshed-${n}`, refresh: `sk-ant-ort01-rotated-${n}` }),
      );
      const f = await fleets.open({
        ...t,
        env: (url) => ({ ANTHROPIC_BASE_URL: url }),
        script: 'first.yaml',
        definitions: { a: DONT_ASK },
        // Sandbox off in 'none' only, unlike a user's default: the CLI then writes the login file itself.
        ...(sandbox === 'none' ? { config: 'security:\n  sandbox: none\n' } : {}),
      });
      // Anthropic's token service, at the host Claude Code refreshes with, stood in for over TLS.
      const anthropic = await startTlsStandIn(f.home, ['claude.com'], (req, res) => {
        if (req.host === 'platform.claude.com' && req.url === '/v1/oauth/token') {
          const a = s.answer(req.body);
          return sendJson(res, a.body, a.status);
        }
        return sendJson(res, { type: 'error', error: { type: 'not_found_error', message: 'no fake for this' } }, 404);
      });
      standIn = anthropic;
      Object.assign(f.env, {
        HTTPS_PROXY: anthropic.proxyUrl,
        NODE_EXTRA_CA_CERTS: anthropic.caFile,
        NO_PROXY: '127.0.0.1,localhost',
      });
      // The person's access token has expired: the API takes only the one the token service issued last.
      f.vendor.accepts = (credential) =>
        credential !== `Bearer ${first.access}` && credential === `Bearer ${s.current}`;
      // Pre-seeded: the login Claude's /login leaves (token expired); a test cannot run that browser sign-in.
      mkdirSync(join(f.home, '.claude'));
      const credsFile = join(f.home, '.claude', '.credentials.json');
      writeFileSync(
        credsFile,
        JSON.stringify({
          claudeAiOauth: {
            accessToken: first.access,
            refreshToken: first.refresh,
            expiresAt: Date.now() - 60_000,
            scopes: ['user:inference', 'user:profile'],
            subscriptionType: 'max',
          },
        }),
        { mode: 0o600 },
      );
      const person = () =>
        (
          JSON.parse(readFileSync(credsFile, 'utf8')) as {
            claudeAiOauth: { accessToken: string; refreshToken: string };
          }
        ).claudeAiOauth;

      const a = await f.spawnChild('a', 'claude-refresh-a', 'first-task-marker-31');
      await eventually(
        () => completionsFrom(f, 'lead-parent', a).length === 1,
        240_000,
        "the first agent's completion",
      );
      expect(completionsFrom(f, 'lead-parent', a)[0]!.body).toContain('the first request arrived');
      expect(s.refreshes).toEqual([first.refresh]);
      expect(f.vendor.auth.length).toBeGreaterThan(0);
      expect(new Set(f.vendor.auth)).toEqual(new Set([`Bearer ${s.current}`]));
      // In the person's own file, not only in the agent's copy.
      await eventually(
        () => person().accessToken === s.current,
        30_000,
        "the refreshed token in the person's .credentials.json",
      );
      expect(person().refreshToken).toBe('sk-ant-ort01-rotated-1');

      const seen = f.vendor.auth.length;
      const b = await f.spawnChild('a', 'claude-refresh-b', 'first-task-marker-31');
      await eventually(
        () => completionsFrom(f, 'lead-parent', b).length === 1,
        240_000,
        "the second agent's completion",
      );
      expect(f.vendor.auth.length).toBeGreaterThan(seen);
      expect(new Set(f.vendor.auth.slice(seen))).toEqual(new Set([`Bearer ${s.current}`]));
      expect(s.refreshes).toEqual([first.refresh]);
      expect(existsSync(join(f.layout.loginMirror(a), '.credentials.json'))).toBe(sandbox === 'auto');
    },
  );
});

/** The claims of a ChatGPT sign-in's id token that Codex reads: plan, user, workspace account. */
const chatgptIdToken = () =>
  unsignedJwt({
    email: 'person@example.com',
    exp: Math.floor(Date.now() / 1000) + 3600,
    iat: Math.floor(Date.now() / 1000),
    'https://api.openai.com/auth': {
      chatgpt_plan_type: 'pro',
      chatgpt_account_id: 'acct-person',
      chatgpt_user_id: 'user-person',
    },
  });

describe('a shared ChatGPT login (Codex) refreshed during a run', { timeout: 600_000 }, () => {
  it.each(['auto', 'none'] as const)(
    "Codex (dont_ask, sandbox %s): the refreshed ChatGPT tokens land in the person's ~/.codex/auth.json and the next agent uses them",
    async (sandbox) => {
      const t = TARGETS.codex();
      const first = { access: 'chatgpt-access-expired', refresh: 'chatgpt-refresh-1' };
      const s = fakeTokenService(
        first,
        (n) => ({ id_token: chatgptIdToken(), access_token: n.access, refresh_token: n.refresh }),
        (n) => ({ access: `chatgpt-access-${n + 1}`, refresh: `chatgpt-refresh-${n + 1}` }),
      );
      const f = await fleets.open({
        ...t,
        env: (url) => ({ OPENAI_BASE_URL: `${url}/v1` }),
        script: 'first.yaml',
        definitions: { a: DONT_ASK },
        // Sandbox off in 'none' only, unlike a user's default: the CLI then writes the login file itself.
        ...(sandbox === 'none' ? { config: 'security:\n  sandbox: none\n' } : {}),
      });
      // OpenAI's side of a ChatGPT login, stood in for over TLS: its token service, and the
      // account service the interactive Codex asks which backend serves the person's workspace.
      const openai = await startTlsStandIn(f.home, ['openai.com', 'chatgpt.com'], (req, res) => {
        if (req.host === 'auth.openai.com' && req.url === '/oauth/token') {
          const a = s.answer(req.body);
          return sendJson(res, a.body, a.status);
        }
        if (req.host === 'chatgpt.com' && req.url?.startsWith('/backend-api/wham/accounts/check')) {
          return sendJson(res, {
            accounts: [
              {
                id: 'acct-person',
                structure: 'personal',
                plan_type: 'pro',
                workspace_backend_origin: 'https://chatgpt.com',
                account_routing_override: 'NO_CONSTRAINT',
              },
            ],
            account_ordering: ['acct-person'],
            default_account_id: 'acct-person',
          });
        }
        return sendJson(res, { detail: 'Not Found' }, 404);
      });
      standIn = openai;
      // The person reaches OpenAI through a proxy that inspects TLS, with its authority trusted.
      Object.assign(f.env, {
        HTTPS_PROXY: openai.proxyUrl,
        CODEX_CA_CERTIFICATE: openai.caFile,
        NO_PROXY: '127.0.0.1,localhost',
      });
      // The person's access token has expired: the API takes only the one the token service issued last.
      f.vendor.accepts = (credential) =>
        credential !== `Bearer ${first.access}` && credential === `Bearer ${s.current}`;
      // Pre-seeded: the ChatGPT login `codex login` leaves; a test cannot run that browser sign-in.
      mkdirSync(join(f.home, '.codex'));
      const authFile = join(f.home, '.codex', 'auth.json');
      writeFileSync(
        authFile,
        JSON.stringify(
          {
            OPENAI_API_KEY: null,
            tokens: {
              id_token: chatgptIdToken(),
              access_token: first.access,
              refresh_token: first.refresh,
              account_id: 'acct-person',
            },
            last_refresh: new Date().toISOString(),
          },
          null,
          2,
        ),
        { mode: 0o600 },
      );
      const person = () =>
        (JSON.parse(readFileSync(authFile, 'utf8')) as { tokens: { access_token: string; refresh_token: string } })
          .tokens;

      const a = await f.spawnChild('a', 'codex-refresh-a', 'first-task-marker-31', t.spawnArgs);
      await eventually(
        () => completionsFrom(f, 'lead-parent', a).length === 1,
        240_000,
        "the first agent's completion",
      );
      expect(completionsFrom(f, 'lead-parent', a)[0]!.body).toContain('the first request arrived');
      expect(f.vendor.rejected).toBeGreaterThan(0);
      // Codex refreshes once for each refused request it had in flight (one run in three it had
      // two), each time with the refresh token issued last: one used again would be refused and
      // would sign the person out.
      const issued = (n: number) => (n === 0 ? first.refresh : `chatgpt-refresh-${n + 1}`);
      expect(s.refreshes.length).toBeGreaterThanOrEqual(1);
      expect(s.refreshes.length).toBeLessThanOrEqual(f.vendor.rejected);
      expect(s.refreshes).toEqual(s.refreshes.map((_, n) => issued(n)));
      const refreshed = s.refreshes.map((_, n) => `Bearer chatgpt-access-${n + 2}`);
      expect(f.vendor.auth.every((credential) => refreshed.includes(credential))).toBe(true);
      // In the person's own file, not only in the agent's copy: the tokens issued last.
      await eventually(
        () => person().access_token === s.current,
        30_000,
        "the refreshed token in the person's auth.json",
      );
      expect(person().refresh_token).toBe(issued(s.refreshes.length));
      const refreshes = s.refreshes.length;

      const seen = f.vendor.auth.length;
      const b = await f.spawnChild('a', 'codex-refresh-b', 'first-task-marker-31', t.spawnArgs);
      await eventually(
        () => completionsFrom(f, 'lead-parent', b).length === 1,
        240_000,
        "the second agent's completion",
      );
      expect(f.vendor.auth.length).toBeGreaterThan(seen);
      expect(new Set(f.vendor.auth.slice(seen))).toEqual(new Set([`Bearer ${s.current}`]));
      expect(s.refreshes).toHaveLength(refreshes);
      expect(existsSync(join(f.layout.loginMirror(a), 'auth.json'))).toBe(sandbox === 'auto');
    },
  );
});
