import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { createServer as createHttpServer, request as httpRequest, type IncomingMessage, type ServerResponse } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo, Socket } from 'node:net';
import { join } from 'node:path';
import { requireTool } from '../helpers/requires.js';
import type { FakeVendor } from './fake-vendor.js';

/**
 * Google's side of a person's Gemini CLI login, on 127.0.0.1, for the shared-login test: with
 * a Google login (`oauth-personal`) Gemini CLI checks its token at oauth2.googleapis.com and
 * talks to the Code Assist API at cloudcode-pa.googleapis.com, both over TLS. The test reaches
 * them as a person behind a company proxy would: `HTTPS_PROXY` names this proxy, which answers
 * CONNECT for *.googleapis.com itself with a certificate from a throwaway authority (made here
 * with openssl, in the test's temp folder) that `NODE_EXTRA_CA_CERTS` makes the CLI trust.
 * Code Assist's model calls are unwrapped and passed to the fake Gemini API (`vendor`), which
 * replays the script and records the bearer token; its answers are wrapped back.
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

function makeCertificates(dir: string): { caFile: string; key: Buffer; cert: Buffer } {
  const f = (n: string) => join(dir, n);
  const bin = requireTool('openssl');
  const openssl = (...args: string[]) => execFileSync(bin, args, { stdio: 'pipe' });
  openssl('req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', f('ca.key'), '-out', f('ca.pem'), '-days', '2', '-subj', '/CN=flotilla test authority');
  openssl('req', '-newkey', 'rsa:2048', '-nodes', '-keyout', f('leaf.key'), '-out', f('leaf.csr'), '-subj', '/CN=googleapis.com');
  writeFileSync(f('leaf.ext'), 'subjectAltName=DNS:*.googleapis.com,DNS:googleapis.com\n');
  openssl('x509', '-req', '-in', f('leaf.csr'), '-CA', f('ca.pem'), '-CAkey', f('ca.key'), '-CAcreateserial', '-out', f('leaf.pem'), '-days', '2', '-extfile', f('leaf.ext'));
  return { caFile: f('ca.pem'), key: readFileSync(f('leaf.key')), cert: readFileSync(f('leaf.pem')) };
}

const json = (res: ServerResponse, body: unknown, status = 200) => {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(body));
};

export async function startFakeGoogle(vendor: FakeVendor, dir: string, account = 'person@example.com'): Promise<FakeGoogle> {
  const { caFile, key, cert } = makeCertificates(dir);
  const requests: FakeGoogle['requests'] = [];

  async function google(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const raw = Buffer.concat(chunks).toString('utf8');
    const host = req.headers.host ?? '';
    const url = req.url ?? '/';
    const auth = String(req.headers.authorization ?? '');
    requests.push({ url: `${host}${url}`, auth, body: raw });
    if (host.startsWith('oauth2.googleapis.com') && url.startsWith('/tokeninfo')) {
      return json(res, { aud: 'gemini-cli', azp: 'gemini-cli', email: account, expires_in: 3500, scope: 'https://www.googleapis.com/auth/cloud-platform https://www.googleapis.com/auth/userinfo.email' });
    }
    if (host.startsWith('www.googleapis.com') && url.startsWith('/oauth2/v2/userinfo')) return json(res, { email: account, verified_email: true });
    if (!host.startsWith('cloudcode-pa.googleapis.com')) return json(res, { error: { code: 404, message: `no fake for ${host}${url}` } }, 404);
    const method = /:(\w+)/.exec(url)?.[1] ?? '';
    const body = raw ? (JSON.parse(raw) as { model?: string; request?: unknown }) : {};
    switch (method) {
      case 'loadCodeAssist':
        return json(res, { currentTier: { id: 'free-tier', name: 'Gemini Code Assist for individuals' }, allowedTiers: [{ id: 'free-tier', isDefault: true }], cloudaicompanionProject: 'fake-project' });
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
  function relay(method: string, body: { model?: string; request?: unknown }, auth: string, res: ServerResponse): Promise<void> {
    const target = new URL(`${vendor.url}/v1beta/models/${body.model ?? 'gemini-2.5-flash'}:${method}${method === 'streamGenerateContent' ? '?alt=sse' : ''}`);
    const payload = JSON.stringify(body.request ?? {});
    return new Promise((resolve, reject) => {
      const out = httpRequest(target, { method: 'POST', headers: { 'content-type': 'application/json', authorization: auth, 'content-length': Buffer.byteLength(payload) } }, (up) => {
        res.writeHead(up.statusCode ?? 500, { 'content-type': String(up.headers['content-type'] ?? 'application/json') });
        if (method !== 'streamGenerateContent') {
          const parts: Buffer[] = [];
          up.on('data', (c: Buffer) => parts.push(c));
          up.on('end', () => { res.end(JSON.stringify({ response: JSON.parse(Buffer.concat(parts).toString('utf8') || '{}') as unknown })); resolve(); });
          return;
        }
        let pending = '';
        up.setEncoding('utf8');
        up.on('data', (c: string) => {
          pending += c;
          const lines = pending.split('\n');
          pending = lines.pop() ?? '';
          for (const line of lines) res.write(line.startsWith('data: ') ? `data: {"response":${line.slice(6)}}\n` : `${line}\n`);
        });
        up.on('end', () => { if (pending) res.write(pending); res.end(); resolve(); });
      });
      out.on('error', reject);
      out.end(payload);
    });
  }

  const tls = createHttpsServer({ key, cert }, (req, res) => {
    void google(req, res).catch((err: unknown) => { if (!res.headersSent) json(res, { error: { code: 500, message: String(err) } }, 500); else res.end(); });
  });
  const proxy = createHttpServer((_req, res) => json(res, { error: 'this proxy only answers CONNECT' }, 405));
  const sockets = new Set<Socket>();
  proxy.on('connect', (req: IncomingMessage, socket: Socket, head: Buffer) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    if (!/\.?googleapis\.com:443$/.test(req.url ?? '')) {
      socket.end('HTTP/1.1 403 Forbidden\r\n\r\n');
      return;
    }
    socket.write('HTTP/1.1 200 Connection Established\r\n\r\n');
    if (head.length) socket.unshift(head);
    tls.emit('connection', socket);
  });
  await new Promise<void>((r) => proxy.listen(0, '127.0.0.1', r));
  return {
    proxyUrl: `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`,
    caFile,
    requests,
    close: () => new Promise<void>((r) => {
      for (const s of sockets) s.destroy();
      tls.close();
      proxy.closeAllConnections();
      proxy.close(() => r());
    }),
  };
}
