import { request as httpRequest, type IncomingMessage, type ServerResponse } from 'node:http';
import type { FakeTokenService } from './fake-token-service.js';
import type { FakeVendor } from './fake-vendor.js';
import { sendJson as json, startTlsStandIn } from './tls-stand-in.js';

/**
 * Google's side of a person's Gemini CLI login, on 127.0.0.1, for the shared-login test: with
 * a Google login (`oauth-personal`) Gemini CLI checks its token at oauth2.googleapis.com and
 * talks to the Code Assist API at cloudcode-pa.googleapis.com, both over TLS. The test reaches
 * them as a person behind a company proxy would (tls-stand-in.ts: `HTTPS_PROXY`, and
 * `NODE_EXTRA_CA_CERTS` to trust the stand-in's authority).
 * Code Assist's model calls are unwrapped and passed to the fake Gemini API (`vendor`), which
 * replays the script and records the bearer token; its answers are wrapped back. With
 * `tokens`, Google's token endpoint (oauth2.googleapis.com/token) answers refresh grants.
 */
export interface FakeGoogle {
  /** `http://127.0.0.1:<port>`, for HTTPS_PROXY. */
  proxyUrl: string;
  /** The throwaway authority's certificate, for NODE_EXTRA_CA_CERTS. */
  caFile: string;
  /** Every request that reached Google's side: `<host><path>`, its Authorization header and body. */
  requests: { url: string; auth: string; body: string }[];
  close(): Promise<void>;
}

export async function startFakeGoogle(
  vendor: FakeVendor,
  dir: string,
  opts: { account?: string; tokens?: FakeTokenService } = {},
): Promise<FakeGoogle> {
  const account = opts.account ?? 'person@example.com';
  const requests: FakeGoogle['requests'] = [];

  async function google(req: IncomingMessage & { host: string; body: string }, res: ServerResponse): Promise<void> {
    const raw = req.body;
    const host = req.host;
    const url = req.url ?? '/';
    const auth = String(req.headers.authorization ?? '');
    requests.push({ url: `${host}${url}`, auth, body: raw });
    // A refresh grant, with a token service to answer it (login-refresh.test.ts).
    if (
      host.startsWith('oauth2.googleapis.com') &&
      url.startsWith('/token') &&
      !url.startsWith('/tokeninfo') &&
      opts.tokens
    ) {
      const a = opts.tokens.answer(raw);
      return json(res, a.body, a.status);
    }
    if (host.startsWith('oauth2.googleapis.com') && url.startsWith('/tokeninfo')) {
      return json(res, {
        aud: 'gemini-cli',
        azp: 'gemini-cli',
        email: account,
        expires_in: 3500,
        scope: 'https://www.googleapis.com/auth/cloud-platform https://www.googleapis.com/auth/userinfo.email',
      });
    }
    if (host.startsWith('www.googleapis.com') && url.startsWith('/oauth2/v2/userinfo'))
      return json(res, { email: account, verified_email: true });
    if (!host.startsWith('cloudcode-pa.googleapis.com'))
      return json(res, { error: { code: 404, message: `no fake for ${host}${url}` } }, 404);
    const method = /:(\w+)/.exec(url)?.[1] ?? '';
    const body = raw ? (JSON.parse(raw) as { model?: string; request?: unknown }) : {};
    switch (method) {
      case 'loadCodeAssist':
        return json(res, {
          currentTier: { id: 'free-tier', name: 'Gemini Code Assist for individuals' },
          allowedTiers: [{ id: 'free-tier', isDefault: true }],
          cloudaicompanionProject: 'fake-project',
        });
      case 'onboardUser':
        return json(res, { done: true, response: { cloudaicompanionProject: { id: 'fake-project' } } });
      case 'countTokens':
        return json(res, { totalTokens: 100 });
      case 'streamGenerateContent':
      case 'generateContent':
        return relay(method, body, auth, res);
      default:
        return json(res, {});
    }
  }

  /** A Code Assist model call as a Gemini API call to the fake vendor; its answer wrapped as Code Assist's. */
  function relay(
    method: string,
    body: { model?: string; request?: unknown },
    auth: string,
    res: ServerResponse,
  ): Promise<void> {
    const target = new URL(
      `${vendor.url}/v1beta/models/${body.model ?? 'gemini-2.5-flash'}:${method}${method === 'streamGenerateContent' ? '?alt=sse' : ''}`,
    );
    const payload = JSON.stringify(body.request ?? {});
    return new Promise((resolve, reject) => {
      const out = httpRequest(
        target,
        {
          method: 'POST',
          headers: {
            'content-type': 'application/json',
            authorization: auth,
            'content-length': Buffer.byteLength(payload),
          },
        },
        (up) => {
          res.writeHead(up.statusCode ?? 500, {
            'content-type': String(up.headers['content-type'] ?? 'application/json'),
          });
          if (method !== 'streamGenerateContent') {
            const parts: Buffer[] = [];
            up.on('data', (c: Buffer) => parts.push(c));
            up.on('end', () => {
              res.end(
                JSON.stringify({ response: JSON.parse(Buffer.concat(parts).toString('utf8') || '{}') as unknown }),
              );
              resolve();
            });
            return;
          }
          let pending = '';
          up.setEncoding('utf8');
          up.on('data', (c: string) => {
            pending += c;
            const lines = pending.split('\n');
            pending = lines.pop() ?? '';
            for (const line of lines)
              res.write(line.startsWith('data: ') ? `data: {"response":${line.slice(6)}}\n` : `${line}\n`);
          });
          up.on('end', () => {
            if (pending) res.write(pending);
            res.end();
            resolve();
          });
        },
      );
      out.on('error', reject);
      out.end(payload);
    });
  }

  const standIn = await startTlsStandIn(dir, ['googleapis.com'], google);
  return { ...standIn, requests };
}
